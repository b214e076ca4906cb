//! `mls simulate`: runs the embedded simulator of the service as a standalone server, for
//! demos and for trying the daemon without an account.
import { Option, type Command } from 'commander';
import { UsageError } from '../errors.js';
import { spreadFaultRate } from '../simulator/faults.js';
import type { Simulator, SimulatorOptions } from '../simulator/index.js';
import { registerSecret } from '../telemetry/secrets.js';
import { parseDuration } from '../time/duration.js';

/** The flags of `mls simulate`, as text from the command line. */
export interface SimulateFlags {
  host?: string;
  port?: string;
  /** Comma-separated model ids. */
  models?: string;
  /** Number of models named `model-1` … `model-N`; excludes `models`. */
  modelCount?: string;
  rate?: string;
  history?: string;
  /** `20s` or a range `0s-20s`. */
  ingestDelay?: string;
  /** `500` or a range `100-1000`. */
  pageSize?: string;
  order?: string;
  endStyle?: string;
  tokenTtl?: string;
  /** Overall probability of a fault per request, spread over the fault kinds. */
  faultRate?: string;
  twins?: string;
  /** Share of entries served off the spec. */
  invalidEntries?: string;
  /** `python` or `plain`: what the models write. */
  content?: string;
  /** Probability that an entry is a hostile line (deep JSON, a 6 MB run, …). */
  hostileLines?: string;
  seed?: string;
}

/** Defaults of `mls simulate`. */
export const SIMULATE_DEFAULTS = {
  host: '127.0.0.1',
  port: '8080',
  modelCount: '3',
  rate: '5',
  history: '10m',
  ingestDelay: '0s',
  pageSize: '500',
  order: 'sorted',
  endStyle: 'absent',
  tokenTtl: '5m',
  faultRate: '0',
  twins: '0',
  invalidEntries: '0',
  content: 'python',
  hostileLines: '0',
} as const;

/** The values of `--content`, as `mls simulate` and `mls demo` accept them. */
export const CONTENT_PROFILES = ['python', 'plain'] as const;

/** Token used when `MLS_API_TOKEN` is unset. */
export const DEFAULT_SIMULATOR_TOKEN = 'sim-token';

function duration(flag: string, text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw new UsageError(`--${flag} must be a duration such as 500ms, 10s, 5m or 1h, got ${JSON.stringify(text)}`);
  return ms;
}

function number(flag: string, text: string, min: number, max: number, integer = false): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
    throw new UsageError(`--${flag} must be ${integer ? 'an integer' : 'a number'} between ${min} and ${max}, got ${JSON.stringify(text)}`);
  }
  return n;
}

function oneOf<T extends string>(flag: string, text: string, values: readonly T[]): T {
  if (!(values as readonly string[]).includes(text)) throw new UsageError(`--${flag} must be one of ${values.join(', ')}, got ${JSON.stringify(text)}`);
  return text as T;
}

function range<T>(text: string, parse: (part: string) => T): { min: T; max: T } {
  const parts = text.split('-');
  if (parts.length > 2) throw new UsageError(`invalid range ${JSON.stringify(text)}`);
  return { min: parse(parts[0]!), max: parse(parts[parts.length - 1]!) };
}

/**
 * Turns the flags of `mls simulate` into simulator options. Throws a `UsageError`
 * naming the flag for any value that cannot be used.
 */
export function simulatorOptionsFromFlags(flags: SimulateFlags, token: string): SimulatorOptions {
  const f = { ...SIMULATE_DEFAULTS, ...Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined)) } as SimulateFlags &
    typeof SIMULATE_DEFAULTS;
  let models: string[];
  if (flags.models !== undefined) {
    if (flags.modelCount !== undefined) throw new UsageError('--models and --model-count cannot be used together');
    models = flags.models.split(',').map((m) => m.trim());
    if (models.some((m) => m === '')) throw new UsageError('--models must be a comma-separated list of non-empty model ids');
    if (new Set(models).size !== models.length) throw new UsageError('--models must not repeat a model id');
  } else {
    const count = number('model-count', f.modelCount, 1, 100_000, true);
    models = Array.from({ length: count }, (_, i) => `model-${i + 1}`);
  }
  const delay = range(f.ingestDelay, (p) => duration('ingest-delay', p));
  if (delay.min > delay.max) throw new UsageError('--ingest-delay: the lower bound must not exceed the upper bound');
  const pages = range(f.pageSize, (p) => number('page-size', p, 1, 1_000_000, true));
  if (pages.min > pages.max) throw new UsageError('--page-size: the lower bound must not exceed the upper bound');
  const options: SimulatorOptions = {
    host: f.host,
    port: number('port', f.port, 0, 65_535, true),
    token,
    models,
    ratePerSec: number('rate', f.rate, 0, 1_000_000),
    historyMs: duration('history', f.history),
    ingestDelayMs: delay,
    pageSize: pages.min === pages.max ? pages.min : pages,
    order: oneOf('order', f.order, ['sorted', 'shuffled'] as const),
    endStyle: oneOf('end-style', f.endStyle, ['absent', 'null', 'empty', 'rotate'] as const),
    tokenTtlMs: duration('token-ttl', f.tokenTtl),
    faults: spreadFaultRate(number('fault-rate', f.faultRate, 0, 1)),
    twinRate: number('twins', f.twins, 0, 1),
    offSpecRate: number('invalid-entries', f.invalidEntries, 0, 1),
    content: oneOf('content', f.content, CONTENT_PROFILES),
    hostileRate: number('hostile-lines', f.hostileLines, 0, 1),
  };
  if (f.seed !== undefined) options.seed = number('seed', f.seed, 0, 2 ** 32 - 1, true);
  return options;
}

/** Where {@link runSimulate} writes and what it waits for. */
export interface RunSimulateOptions {
  /** Environment to read `MLS_API_TOKEN` from. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Where the status lines go. Default `process.stderr`. */
  stderr?: NodeJS.WritableStream;
  /** Stops the simulator when aborted, in addition to SIGINT and SIGTERM. */
  signal?: AbortSignal;
  /** Called once the simulator listens, before waiting. */
  onListening?: (sim: Simulator) => void;
}

/** Starts a simulator from flags; the token comes from `MLS_API_TOKEN` or defaults to `sim-token`. */
export async function startSimulatorFromFlags(flags: SimulateFlags, env: NodeJS.ProcessEnv = process.env): Promise<Simulator> {
  const token = env.MLS_API_TOKEN || DEFAULT_SIMULATOR_TOKEN;
  registerSecret(token);
  return (await import('../simulator/index.js')).startSimulator(simulatorOptionsFromFlags(flags, token));
}

function describeModels(models: readonly string[]): string {
  return models.length <= 5 ? models.join(', ') : `${models.slice(0, 5).join(', ')}, … ${models.length} in all`;
}

/** Runs `mls simulate` until SIGINT, SIGTERM or `signal`, then closes the server. */
export async function runSimulate(flags: SimulateFlags, options: RunSimulateOptions = {}): Promise<void> {
  const stderr = options.stderr ?? process.stderr;
  const simOptions = simulatorOptionsFromFlags(flags, (options.env ?? process.env).MLS_API_TOKEN || DEFAULT_SIMULATOR_TOKEN);
  registerSecret(simOptions.token);
  const sim = await (await import('../simulator/index.js')).startSimulator(simOptions);
  stderr.write(`simulator listening on ${sim.url} (models: ${describeModels(simOptions.models)})\n`);
  options.onListening?.(sim);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      options.signal?.removeEventListener('abort', stop);
      resolve();
    };
    if (options.signal?.aborted) return stop();
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    options.signal?.addEventListener('abort', stop, { once: true });
  });
  await sim.close();
  stderr.write('simulator stopped\n');
}

/** Adds `mls simulate` to the program. */
export function register(program: Command): void {
  program
    .command('simulate')
    .description('Run a local simulator of the model-management service (token from MLS_API_TOKEN, default sim-token)')
    .option('--host <host>', 'interface to listen on', SIMULATE_DEFAULTS.host)
    .option('--port <port>', 'port to listen on (0 picks a free one)', SIMULATE_DEFAULTS.port)
    .addOption(new Option('--models <ids>', 'comma-separated model ids').conflicts('modelCount'))
    .option('--model-count <n>', `number of models named model-1 … model-N (default ${SIMULATE_DEFAULTS.modelCount})`)
    .option('--rate <n>', 'new entries per second per model', SIMULATE_DEFAULTS.rate)
    .option('--history <duration>', 'span of entries present at start', SIMULATE_DEFAULTS.history)
    .option('--ingest-delay <range>', 'delay before an entry becomes visible, e.g. 0s-20s', SIMULATE_DEFAULTS.ingestDelay)
    .option('--page-size <range>', 'entries per page, e.g. 500 or 100-1000', SIMULATE_DEFAULTS.pageSize)
    .option('--order <order>', 'order within a page: sorted or shuffled', SIMULATE_DEFAULTS.order)
    .option('--end-style <style>', 'end of pages: absent, null, empty or rotate', SIMULATE_DEFAULTS.endStyle)
    .option('--token-ttl <duration>', 'age after which a next_token expires', SIMULATE_DEFAULTS.tokenTtl)
    .option('--fault-rate <p>', 'probability of a fault per request', SIMULATE_DEFAULTS.faultRate)
    .option('--twins <p>', 'probability that an entry has an identical twin', SIMULATE_DEFAULTS.twins)
    .option('--invalid-entries <p>', 'share of entries served off the spec (log null or a number, stream a number, a time that is no time, an array), each alike at every read', SIMULATE_DEFAULTS.invalidEntries)
    .option('--content <profile>', 'what the models write: python (a Python model server, one line per entry) or plain', SIMULATE_DEFAULTS.content)
    .option('--hostile-lines <p>', 'probability that an entry is a line shippers fail on: JSON nested 10,000 deep, a 6 MB token, a lone surrogate, …', SIMULATE_DEFAULTS.hostileLines)
    .option('--seed <n>', 'seed of every random choice')
    .action(async (flags: SimulateFlags) => {
      await runSimulate(flags);
    });
}
