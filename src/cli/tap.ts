//! `mls tap -c F`: prints each record as the running daemon hands it to a sink's send, live,
//! as NDJSON (or text for a person), through the daemon's control socket beside its state
//! file; the network admin port never serves log content. The daemon drops what a tap that
//! falls behind cannot take (it never waits for one) and counts it: the count is printed at
//! the end.
import { Option, type Command } from 'commander';
import { configOption, interruption, processIo, runCommand, type CommandIo } from './common.js';
import { MlsError, UsageError, describeError } from '../errors.js';
import type { TapEvent } from '../delivery/tap.js';

interface TapOptions {
  config: string;
  model?: string;
  sink?: string;
  level?: string;
  limit?: number;
  output: 'ndjson' | 'text';
}

/** Adds `mls tap`. */
export function register(program: Command, io: CommandIo = processIo()): void {
  program
    .command('tap')
    .description("print the records the running daemon hands its sinks, as it hands them")
    .addOption(configOption())
    .option('--model <id>', "only this model's records")
    .option('--sink <name>', 'only what this sink gets (without it, each line names its sink)')
    .option('--level <level>', 'only records of this level or more severe: trace, debug, info, warn, error or fatal')
    .option('--limit <n>', 'exit after this many records', (v) => {
      if (!/^[1-9]\d*$/.test(v)) throw new UsageError(`--limit: expected a positive whole number, got ${JSON.stringify(v)}`);
      return Number(v);
    })
    .addOption(new Option('--output <format>', 'how each record is printed').choices(['ndjson', 'text']).default('ndjson'))
    .action(runCommand(io, (opts: TapOptions) => runTap(opts, io)));
}

async function runTap(o: TapOptions, io: CommandIo): Promise<void> {
  const [{ loadConfig }, { connectControl }, { controlSocketPath }, { LEVELS }] = await Promise.all([import('./config.js'), import('../control/client.js'), import('../control/protocol.js'), import('../processing/types.js')]);
  if (o.level !== undefined && !(LEVELS as readonly string[]).includes(o.level)) throw new UsageError(`--level: expected one of ${LEVELS.join(', ')}, got ${JSON.stringify(o.level)}`);
  const config = await loadConfig(o.config, io.env);
  const sinks = config.sinks.map((s) => s.name);
  if (o.sink !== undefined && !sinks.includes(o.sink)) throw new UsageError(`--sink: ${o.sink} is not a sink of ${o.config}; its sinks: ${sinks.join(', ')}`);
  if (o.model !== undefined && !config.models.some((m) => m.id === o.model)) throw new UsageError(`--model: ${o.model} is not a model of ${o.config}`);
  const path = controlSocketPath(config.state.path);
  const conn = await connectControl(path, 0).catch((cause: unknown) => {
    throw new MlsError('MLS_ERR_NO_DAEMON', `no daemon answers on ${path} (${describeError(cause)}); start one with 'mls run -c ${o.config}'`, { cause });
  });
  const { signal, release } = interruption(io);
  const done = new AbortController();
  const over = AbortSignal.any([signal, done.signal]);
  let why: string | undefined;
  let shown = 0;
  let dropped = 0;
  const finish = (reason?: string) => {
    if (!over.aborted) why = reason;
    done.abort();
  };
  io.stdout.on('error', () => finish()); // the reader went away (`| head`)
  const print = (e: TapEvent) => {
    dropped = e.dropped;
    for (const line of e.lines.split(/(?<=\n)/)) {
      if (line === '' || shown === o.limit) continue;
      shown++;
      // A slow reader of our output: stop reading the socket and let the daemon drop for it.
      if (!io.stdout.write(render(line, e.sink, o))) {
        conn.pause();
        io.stdout.once('drain', () => conn.resume());
      }
    }
    if (shown === o.limit) finish();
  };
  conn.request('tap', { model: o.model, sink: o.sink, level: o.level }, (data) => print(data as TapEvent)).then(
    (result) => {
      dropped = (result as { dropped: number }).dropped;
      finish('the daemon stopped');
    },
    (err: unknown) => {
      if (over.aborted) return; // we closed it
      io.setExitCode(err instanceof MlsError ? err.exitCode : 1);
      finish(describeError(err));
    },
  );
  if (!over.aborted) await new Promise((resolve) => over.addEventListener('abort', resolve, { once: true }));
  conn.close();
  release();
  io.stderr.write(`mls tap: ${why === undefined ? '' : `${why}; `}${shown} records shown, ${dropped} dropped${dropped > 0 ? ' (the daemon does not wait for a tap that falls behind)' : ''}\n`);
}

/** One record line as printed: as the sink got it (naming the sink unless --sink chose it), or as text. */
function render(line: string, sink: string, o: TapOptions): string {
  if (o.output === 'ndjson') return o.sink === undefined ? `{"sink":${JSON.stringify(sink)},${line.slice(1)}` : line;
  const r = JSON.parse(line) as { model_id: string; time: string; stream: string; log: string; level?: string };
  return `${o.sink === undefined ? `${sink} ` : ''}${r.time} ${r.model_id} ${r.stream}${r.level === undefined ? '' : ` ${r.level.toUpperCase()}`} ${r.log}\n`;
}
