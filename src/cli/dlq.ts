//! `mls dlq list|replay|purge [--sink NAME]`: inspect, re-send and delete dead letters
//! (batches a sink rejected permanently). Replay and purge write the state file: directly
//! when no daemon runs, through the running daemon's control socket otherwise.
import type { Command } from 'commander';
import { configOption } from './common.js';
import type { Config } from '../config/index.js';
import { UsageError } from '../errors.js';

interface DlqOptions {
  config: string;
  sink?: string;
}

/** Adds `mls dlq`. */
export function register(program: Command): void {
  const dlq = program.command('dlq').description('inspect, replay or purge dead letters (batches a sink rejected)');
  dlq
    .command('list')
    .description('list dead letters')
    .addOption(configOption())
    .option('--sink <name>', 'only this sink')
    .option('--entries', 'print the entries of each dead letter as NDJSON too')
    .action(async (opts: DlqOptions & { entries?: boolean }) => {
      const config = await loadFor(opts);
      const [{ readStateFile }, { scrubSecrets }] = await Promise.all([import('../journal/reader.js'), import('../telemetry/secrets.js')]);
      const rows = readStateFile(config.state.path, (store) => store.listDeadLetters(opts.sink, 100_000)) ?? [];
      if (rows.length === 0) process.stdout.write('no dead letters\n');
      for (const d of rows) {
        // A receiver's answer may quote a credential of the config in a form the sink did not know.
        process.stdout.write(`#${d.id}  sink=${d.sink}  entries=${d.count}  seq=${d.firstSeq}..${d.lastSeq}  at=${new Date(d.createdMs).toISOString()}  error=${scrubSecrets(d.error)}\n`);
        if (opts.entries) for (const e of d.entries) process.stdout.write(`${JSON.stringify({ model_id: e.modelId, time: e.time, stream: e.stream, log: e.log })}\n`);
      }
    });
  dlq
    .command('replay')
    .description('send dead letters again (through the running daemon, or directly when none runs)')
    .addOption(configOption())
    .option('--sink <name>', 'only this sink')
    .action(async (opts: DlqOptions) => {
      const config = await loadFor(opts);
      const { writeState } = await import('./state-writer.js');
      await writeState(config.state.path, {
        direct: () => replayDirectly(config, opts.sink),
        viaDaemon: async (daemon) => {
          const { marked } = (await daemon.request('dlq.replay', { sink: opts.sink })) as { marked: number };
          process.stdout.write(`${marked} dead letters marked for replay; the running daemon sends them within seconds (see 'mls dlq list')\n`);
        },
      });
    });
  dlq
    .command('purge')
    .description('delete dead letters for good (through the running daemon, or directly when none runs)')
    .addOption(configOption())
    .option('--sink <name>', 'only this sink')
    .action(async (opts: DlqOptions) => {
      const config = await loadFor(opts);
      const [{ writeState }, { StateStore }] = await Promise.all([import('./state-writer.js'), import('../journal/store.js')]);
      const purged = await writeState(config.state.path, {
        direct: async () => {
          const store = StateStore.open(config.state.path);
          try {
            return store.deleteDeadLetters(store.listDeadLetters(opts.sink, 1_000_000).map((d) => d.id));
          } finally {
            store.close();
          }
        },
        viaDaemon: async (daemon) => ((await daemon.request('dlq.purge', { sink: opts.sink })) as { purged: number }).purged,
      });
      process.stdout.write(`${purged} dead letters purged\n`);
    });
}

/** The config of `opts.config`, once `--sink` is found in it. */
async function loadFor(opts: DlqOptions): Promise<Config> {
  const { loadConfig } = await import('./config.js');
  const config = await loadConfig(opts.config);
  checkSink(config, opts.sink);
  return config;
}

function checkSink(config: Config, sink: string | undefined): void {
  if (sink !== undefined && !config.sinks.some((s) => s.name === sink)) {
    throw new UsageError(`--sink ${sink}: no such sink in the config (sinks: ${config.sinks.map((s) => s.name).join(', ')})`);
  }
}

async function replayDirectly(config: Config, only: string | undefined): Promise<void> {
  // Loaded here, not with the command's definition: every `mls` command starts faster.
  const [{ sinkRegistry }, { batchId }, { guardedSend }, { StateStore }, { createLogger }] = await Promise.all([
    import('../sinks/registry.js'),
    import('../delivery/batch-id.js'),
    import('../delivery/guarded-send.js'),
    import('../journal/store.js'),
    import('../telemetry/logger.js'),
  ]);
  const store = StateStore.open(config.state.path);
  const logger = createLogger({ level: 'warn' });
  let sent = 0;
  let failed = 0;
  try {
    for (const sc of config.sinks) {
      if (only !== undefined && sc.name !== only) continue;
      const letters = store.listDeadLetters(sc.name, 1_000_000);
      if (letters.length === 0) continue;
      const row = store.ensureSink(sc.name);
      const sink = await sinkRegistry.build(sc, { name: sc.name, state: row.state, now: Date.now, logger: logger.child({ sink: sc.name }), commitState: (s) => store.setSinkState(sc.name, s) }, { models: config.models });
      try {
        for (const d of letters) {
          const batch = { id: batchId(store.installationId!, sc.name, d.firstSeq, d.lastSeq), firstSeq: d.firstSeq, lastSeq: d.lastSeq, entries: d.entries };
          const { outcome } = await guardedSend(sink, batch, AbortSignal.timeout(60_000), { sink: sc.name, timeoutMs: sinkRegistry.sendTimeoutMs(sc), maxAfterMs: sc.retry.max_delay });
          if (outcome.status === 'ok') {
            if (outcome.state !== undefined) store.setSinkState(sc.name, outcome.state);
            store.deleteDeadLetters([d.id]);
            sent++;
            process.stdout.write(`#${d.id} replayed to ${sc.name} (${d.count} entries)\n`);
          } else {
            failed++;
            store.keepDeadLetter(d.id, outcome.error);
            process.stdout.write(`#${d.id} still failing on ${sc.name}: ${outcome.error}\n`);
          }
        }
        await sink.flush();
      } finally {
        await sink.close();
      }
    }
  } finally {
    store.close();
  }
  process.stdout.write(`${sent} dead letters replayed, ${failed} still failing\n`);
  if (failed > 0) process.exitCode = 1;
}
