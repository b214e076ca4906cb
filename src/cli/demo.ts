//! `mls demo`: starts the embedded simulator with a few models and runs the daemon
//! against it with two file sinks under ./demo-out/ (records with the default processing, and
//! raw entries), showing a live progress line. At the end it compares what was shipped with
//! what the simulator served, and shows what processing made of the models' output. It
//! writes the config it runs into the output folder and opens its admin server and control
//! socket, so that `mls top` and `mls tap` can watch it. Its own lines and the daemon's log
//! lines (readable ones, unless asked otherwise) never share a line.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { demoReport } from './demo-report.js';
import { join, relative, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { logFormatOption } from './run.js';
import type { LogFormat } from '../telemetry/logger.js';
import { parseDuration, formatDuration } from '../time/duration.js';
import { UsageError } from '../errors.js';
import { CONTENT_PROFILES } from './simulate.js';
import type { ContentProfile } from '../simulator/index.js';

/** The simulated ingestion delay is at most 3 s; spans are read again once 5 s old. */
const MAX_INGEST_DELAY_MS = 3_000;
const REREAD_AGE_MS = 5_000;

interface DemoOptions {
  out: string;
  duration?: string;
  models: string;
  rate: string;
  content: ContentProfile;
  logFormat: LogFormat;
}

/** Adds `mls demo`. */
export function register(program: Command): void {
  program
    .command('demo')
    .description('run the daemon against the embedded simulator, shipping into ./demo-out/')
    .option('--out <dir>', 'output folder (files and state)', './demo-out')
    .option('--duration <d>', 'stop after this long (default: run until Ctrl-C)')
    .option('--models <n>', 'number of simulated models', '3')
    .option('--rate <n>', 'log entries per second per model', '20')
    .addOption(new Option('--content <profile>', 'what the models write: python (a Python model server, one line per entry) or plain').choices(CONTENT_PROFILES).default('python'))
    .addOption(logFormatOption("the daemon's log lines").default('pretty'))
    .action(async (opts: DemoOptions) => {
      const durationMs = opts.duration === undefined ? undefined : parseDuration(opts.duration);
      if (opts.duration !== undefined && durationMs === undefined) throw new UsageError(`--duration: "${opts.duration}" is not a duration; use e.g. 30s, 5m`);
      const modelCount = Number(opts.models);
      const rate = Number(opts.rate);
      if (!Number.isInteger(modelCount) || modelCount < 1 || modelCount > 100) throw new UsageError('--models must be an integer from 1 to 100');
      if (!Number.isFinite(rate) || rate <= 0) throw new UsageError('--rate must be a positive number');
      await runDemo({ out: resolve(opts.out), durationMs, modelCount, rate, content: opts.content, logFormat: opts.logFormat });
    });
}

async function runDemo(o: { out: string; durationMs: number | undefined; modelCount: number; rate: number; content: ContentProfile; logFormat: LogFormat }): Promise<void> {
  prepareOutDir(o.out);
  const [{ Daemon }, { startSimulator }, { readStateFile }, { createLogger }, { startAdminServer }, { startControl }, { dump }, { createLogUpdate }] = await Promise.all([
    import('../daemon/index.js'),
    import('../simulator/index.js'),
    import('../journal/reader.js'),
    import('../telemetry/logger.js'),
    import('../admin/server.js'),
    import('./run.js'),
    import('js-yaml'),
    import('log-update'),
  ]);
  // On a terminal the progress line stays at the bottom, each log line written above it.
  const draw = process.stderr.isTTY ? createLogUpdate(process.stderr) : undefined;
  let progressLine = '';
  const logger = createLogger({
    level: process.env.MLS_LOG_LEVEL ?? 'warn',
    format: o.logFormat,
    destination: draw ? { write: (line: string) => (draw.persist(line.trimEnd()), progressLine && draw(progressLine)) } : 2,
  });
  const token = `demo-${randomBytes(12).toString('hex')}`;
  const models = Array.from({ length: o.modelCount }, (_, i) => `demo-model-${i + 1}`);
  const sim = await startSimulator({
    token,
    models,
    ratePerSec: o.rate,
    historyMs: 120_000,
    ingestDelayMs: { min: 0, max: MAX_INGEST_DELAY_MS },
    pageSize: { min: 50, max: 400 },
    order: 'shuffled',
    endStyle: 'rotate',
    twinRate: 0.02,
    content: o.content,
    multilineRate: 0.02,
    unicodeRate: 0.05,
    faults: { error500: 0.02, error503: 0.01, truncated: 0.01 },
  });
  const { parseConfig } = await import('./config.js');
  const admin = await startAdminServer({ listen: '127.0.0.1:0', maxLagMs: 300_000, logger });
  const raw = {
    api: { base_url: sim.url, token, retry: { deadline: '30s' } },
    state: { path: join(o.out, 'state.db') },
    poll: { interval: '2s', lookback: '30s', settle: '1s', start_at: '-2m', max_window: '10m', concurrency: 4, rate_limit: 'none', reread: { mode: 'sparse', ages: [`${REREAD_AGE_MS}ms`] } },
    models: models.map((id) => ({ id })),
    sinks: [
      { name: 'demo-records', type: 'file', path: join(o.out, 'records', '{model_id}', '%Y-%m-%d.ndjson') },
      { name: 'demo-raw', type: 'file', raw: true, path: join(o.out, 'raw', '{model_id}', '%Y-%m-%d.ndjson') },
    ],
    admin: { listen: admin.address },
    shutdown_timeout: '10s',
  };
  const config = parseConfig(raw, { baseDir: process.cwd(), env: process.env });
  // The config it runs, for `mls top` and `mls tap` (its token is the simulator's, made for this run).
  const configFile = join(o.out, 'mls.yaml');
  writeFileSync(configFile, dump(raw), { mode: 0o600 });
  const daemon = await Daemon.start({ config, logger }).catch(async (err: unknown) => {
    await Promise.all([admin.close(), sim.close()]);
    throw err;
  });
  admin.serve(daemon);
  const control = await startControl(daemon, config.state.path, logger.child({ component: 'control' }));
  const shown = relative(process.cwd(), configFile).startsWith('..') ? configFile : relative(process.cwd(), configFile);
  process.stderr.write(
    `mls demo: simulator at ${sim.url} with ${models.length} models (${o.rate} entries/s each, late arrivals, faults)\n` +
      `mls demo: shipping records into ${join(o.out, 'records', '<model>', '<date>.ndjson')} and raw entries into ${join(o.out, 'raw', '…')}` +
      `${o.durationMs ? ` for ${formatDuration(o.durationMs)}` : '; Ctrl-C to stop'}\n` +
      `mls demo: watch it from another terminal: mls top -c ${shown}\n` +
      (control ? `mls demo: see the records as the sinks get them: mls tap -c ${shown} --output text\n` : ''),
  );
  const progress = setInterval(() => {
    const st = daemon.status();
    const everywhere = Math.min(...st.sinks.map((s) => s.deliveredEntries));
    const lag = Math.max(0, ...st.models.map((m) => m.lagSeconds));
    progressLine = `models ${st.models.length} · entries from the service ${st.journal.lastSeq} · delivered to every sink ${everywhere} · max lag ${lag.toFixed(1)}s · backlog ${Math.max(0, ...st.sinks.map((s) => s.backlogEntries))} entries`;
    if (draw) draw(progressLine);
    else process.stderr.write(`${progressLine}\n`);
  }, draw ? 500 : 5_000).unref();

  await new Promise<void>((done) => {
    if (o.durationMs !== undefined) setTimeout(done, o.durationMs).unref();
    process.once('SIGINT', () => done());
    process.once('SIGTERM', () => done());
  });
  clearInterval(progress);
  draw?.done();
  await control?.close();
  await daemon.stop();
  await admin.close();
  sim.stopProducing();
  const truth = sim.groundTruth();
  const tracebacks = sim.tracebackEpisodes();
  await sim.close();
  const checkpoints = new Map((readStateFile(config.state.path, (reader) => reader.listCheckpoints()) ?? []).map((c) => [c.modelId, c]));

  // Everything before a model's re-read frontier for REREAD_AGE_MS was read when it was at
  // least that old, longer than the simulated ingestion delay: each such entry must be in the
  // files exactly once. (Younger late entries are caught by later re-reads.)
  const report = demoReport(join(o.out, 'raw'), join(o.out, 'records'), {
    entries: truth,
    tracebacks,
    settled: (modelId) => {
      const c = checkpoints.get(modelId);
      const frontier = (JSON.parse(c?.planState ?? '{}') as { f?: Record<string, number> }).f?.[String(REREAD_AGE_MS)];
      return c === undefined ? { fromMs: 0, toMs: Number.NEGATIVE_INFINITY } : { fromMs: c.startMs, toMs: frontier ?? Number.NEGATIVE_INFINITY };
    },
  });
  process.stderr.write(report.text);
  if (report.failed) process.exitCode = 1;
}

/** A demo starts clean: its folder must be new, empty, or a previous demo's. */
function prepareOutDir(dir: string): void {
  if (existsSync(dir)) {
    const names = readdirSync(dir);
    if (names.length > 0 && !names.includes('state.db')) {
      throw new UsageError(`--out ${dir} exists and is not a previous demo's folder; choose another --out`);
    }
    rmSync(dir, { recursive: true, force: true });
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}
