//! `mls top -c F` (or `--admin URL`): a live view of the running daemon, refreshed every
//! second from its admin server's `/status` (top-view.ts draws it). Keys: `s` changes the
//! order, `q` quits. `--once` prints one frame and exits, for scripts; without a terminal
//! it prints a frame each second, one after another, until interrupted.
import type { Command } from 'commander';
import { configOption, interruption, processIo, runCommand, type CommandIo } from './common.js';
import { MlsError, UsageError, describeError } from '../errors.js';
import type { DaemonStatus } from '../daemon/status.js';
import { SORTS, type Sort } from './top-view.js';

interface TopOptions {
  config?: string;
  admin?: string;
  once?: boolean;
}

const REFRESH_MS = 1_000;

/** Adds `mls top`. */
export function register(program: Command, io: CommandIo = processIo()): void {
  const config = configOption(true);
  config.description = 'configuration file (YAML) whose admin server to ask';
  program
    .command('top')
    .description('live view of the running daemon: rates, lag, backlogs and errors per model and per sink')
    .addOption(config)
    .option('--admin <url>', 'the admin server to ask, e.g. http://127.0.0.1:9464 (instead of the config\'s admin.listen)')
    .option('--once', 'print one frame and exit')
    .action(runCommand(io, (opts: TopOptions) => runTop(opts, io)));
}

async function runTop(o: TopOptions, io: CommandIo): Promise<void> {
  const [{ fetchStatusAt }, { renderFrame }] = await Promise.all([import('./status-fetch.js'), import('./top-view.js')]);
  const url = await statusUrlOf(o, io);
  const source = `daemon at ${url.slice(0, -'/status'.length)}`;
  const read = async (): Promise<DaemonStatus> => {
    const st = await fetchStatusAt(url).catch((err: unknown) => {
      throw new MlsError('MLS_ERR_NO_DAEMON', `no daemon answers at ${url} (${describeError(err)}); is it running?`);
    });
    return st ?? Promise.reject(new MlsError('MLS_ERR_NO_DAEMON', `${url} answered with an error`));
  };
  let last = await read();
  if (o.once) return void io.stdout.write(`${renderFrame(last, { source, sort: 'trouble' })}\n`);
  // Not a terminal (a pipe, a file): one frame after another as plain text, as `top -b` does,
  // instead of the escape codes that redraw a terminal in place.
  const terminal = (io.stdout as Partial<NodeJS.WriteStream>).isTTY === true;
  const draw = terminal ? (await import('log-update')).createLogUpdate(io.stdout as NodeJS.WriteStream) : Object.assign((frame: string) => void io.stdout.write(`${frame}\n\n`), { done() {} });
  let sort: Sort = 'trouble';
  let problem: string | undefined;
  const { signal, release } = interruption(io);
  const quit = new AbortController();
  const stop = AbortSignal.any([signal, quit.signal]);
  const redraw = () => stop.aborted || draw(renderFrame(last, { source, sort, keys: terminal, problem }));
  const refresh = setInterval(() => {
    read().then(
      (st) => ((last = st), (problem = undefined), redraw()),
      (err: unknown) => ((problem = describeError(err)), redraw()),
    );
  }, REFRESH_MS);
  const onKey = (_: string, key: { name?: string; ctrl?: boolean } | undefined) => {
    if (key?.name === 'q' || (key?.ctrl === true && key.name === 'c')) quit.abort();
    if (key?.name === 's') sort = SORTS[(SORTS.indexOf(sort) + 1) % SORTS.length]!;
    redraw();
  };
  const stdin = process.stdin;
  if (stdin.isTTY) {
    (await import('node:readline')).emitKeypressEvents(stdin);
    stdin.setRawMode(true).on('keypress', onKey);
  }
  redraw();
  await new Promise((resolve) => stop.addEventListener('abort', resolve, { once: true }));
  clearInterval(refresh);
  draw.done();
  release();
  if (stdin.isTTY) stdin.off('keypress', onKey).setRawMode(false).pause();
}

/** The `/status` URL to ask: `--admin`, else the config's admin server. */
async function statusUrlOf(o: TopOptions, io: CommandIo): Promise<string> {
  if (o.admin !== undefined) {
    if (!URL.canParse(o.admin)) throw new UsageError(`--admin: not a URL: ${JSON.stringify(o.admin)}; give the admin server's, e.g. http://127.0.0.1:9464`);
    return new URL('/status', o.admin).toString();
  }
  if (o.config === undefined) throw new UsageError('name the daemon: -c FILE (or MLS_CONFIG), or --admin URL');
  const [{ loadConfig }, { statusUrl }] = await Promise.all([import('./config.js'), import('./status-fetch.js')]);
  const config = await loadConfig(o.config, io.env);
  const url = config.admin && statusUrl(config.admin.listen);
  if (url === undefined) throw new UsageError(`${o.config} has no admin server, which mls top reads: add "admin: { listen: 127.0.0.1:9464 }" to it and restart the daemon (or reload it with SIGHUP), or pass --admin URL`);
  return url;
}
