//! `mls settings update`: changes the settings of one model. Only the settings given on
//! the command line are sent; every value is checked before any request is made.
import type { Command } from 'commander';
import type { ApiClientOptions } from '../api/client-options.js';
import type { ApiClient, ModelSettings } from '../api/types.js';
import { UsageError } from '../errors.js';
import { parseDuration } from '../time/duration.js';
import { registerSettingsAsCode } from './settings-as-code.js';
import { addApiOptions, OutputWriter, processIo, refuseTokenFlag, resolveConnection, runCommand, type ApiCliOptions, type CommandIo } from './common.js';

/** Options of `mls settings update` as commander parses them. */
export interface SettingsUpdateCliOptions extends ApiCliOptions {
  model: string;
  minReplica?: string;
  maxReplica?: string;
  scaleDownDelay?: string;
  inferenceTime?: string;
  dedicated?: boolean;
  shared?: boolean;
  machineType?: string;
  containerConcurrency?: string;
  ioTracking?: boolean;
  dryRun?: boolean;
}

/** What the command depends on besides its streams; tests replace parts. */
export interface SettingsDeps {
  createClient?: (options: ApiClientOptions) => ApiClient;
}

/** Largest value accepted for an integer setting (a signed 32-bit integer). */
const MAX_INT = 2_147_483_647;

/** Adds `mls settings update` to the program. */
export function register(program: Command, io: CommandIo = processIo(), deps: SettingsDeps = {}): void {
  const settings = program.command('settings').description('change the settings of models: by hand (update), or as declared in the config (plan, apply, history)');
  const update = settings
    .command('update')
    .description('update settings of a model; only the settings given are sent')
    .requiredOption('--model <id>', 'model to update')
    .option('--min-replica <n>', 'minimum number of replicas')
    .option('--max-replica <n>', 'maximum number of replicas')
    .option('--scale-down-delay <seconds>', 'delay before scaling down, in seconds (or a duration such as 5m)')
    .option('--inference-time <seconds>', 'longest time for one inference request, in seconds (or a duration)')
    .option('--dedicated', 'run the model on a dedicated machine')
    .option('--shared', 'run the model on a shared machine')
    .option('--machine-type <type>', 'machine type of the model')
    .option('--container-concurrency <n>', 'concurrent requests the model can handle')
    .option('--io-tracking', 'enable input/output tracking')
    .option('--no-io-tracking', 'disable input/output tracking')
    .option('--dry-run', 'print the request body and send nothing');
  addApiOptions(update);
  update.action(runCommand(io, (opts: SettingsUpdateCliOptions) => runSettingsUpdate(opts, io, deps)));
  registerSettingsAsCode(settings, io);
}

function integer(flag: string, text: string): number {
  const s = text.trim();
  if (!/^\d+$/.test(s)) {
    const what = /^-\d+$/.test(s) ? 'a negative number' : JSON.stringify(text);
    throw new UsageError(`${flag}: expected a non-negative integer, got ${what}`);
  }
  const n = Number(s);
  if (n > MAX_INT) throw new UsageError(`${flag}: ${s} is too large (at most ${MAX_INT})`);
  return n;
}

/** Whole seconds, from `90` or a duration such as `90s` or `5m`. */
function seconds(flag: string, text: string): number {
  const s = text.trim();
  if (/^-?\d+$/.test(s)) return integer(flag, s);
  const ms = parseDuration(s);
  if (ms === undefined || ms % 1000 !== 0) {
    throw new UsageError(`${flag}: expected whole seconds such as 300 or 5m, got ${JSON.stringify(text)}`);
  }
  return integer(flag, String(ms / 1000));
}

/**
 * Builds the `data` object from the options, refusing an empty update, malformed or
 * negative numbers, `min > max` and contradictory flags.
 * @throws UsageError naming the option at fault.
 */
export function buildSettings(opts: SettingsUpdateCliOptions): ModelSettings {
  const data: ModelSettings = {};
  if (opts.minReplica !== undefined) data.min_replica = integer('--min-replica', opts.minReplica);
  if (opts.maxReplica !== undefined) data.max_replica = integer('--max-replica', opts.maxReplica);
  if (data.min_replica !== undefined && data.max_replica !== undefined && data.min_replica > data.max_replica) {
    throw new UsageError(`--min-replica (${data.min_replica}) must not exceed --max-replica (${data.max_replica})`);
  }
  if (opts.scaleDownDelay !== undefined) data.scale_down_delay = seconds('--scale-down-delay', opts.scaleDownDelay);
  if (opts.inferenceTime !== undefined) data.inference_time = seconds('--inference-time', opts.inferenceTime);
  if (opts.dedicated && opts.shared) throw new UsageError('--dedicated and --shared exclude each other; give one');
  if (opts.dedicated) data.is_dedicated = true;
  if (opts.shared) data.is_dedicated = false;
  if (opts.machineType !== undefined) {
    const t = opts.machineType.trim();
    if (t === '') throw new UsageError('--machine-type: expected a machine type, got an empty value');
    data.machine_type = t;
  }
  if (opts.containerConcurrency !== undefined) data.container_concurrency = integer('--container-concurrency', opts.containerConcurrency);
  if (opts.ioTracking !== undefined) data.is_input_output_enabled = opts.ioTracking;
  if (Object.keys(data).length === 0) {
    throw new UsageError('nothing to update: give at least one setting, e.g. --min-replica 1 (see mls settings update --help)');
  }
  return data;
}

/** Runs `mls settings update` with parsed options. Failures are thrown. */
export async function runSettingsUpdate(opts: SettingsUpdateCliOptions, io: CommandIo, deps: SettingsDeps = {}): Promise<void> {
  refuseTokenFlag(opts);
  const modelId = opts.model.trim();
  if (modelId === '') throw new UsageError('--model: expected a model id');
  const data = buildSettings(opts);
  const out = new OutputWriter(io.stdout);
  try {
    if (opts.dryRun) {
      await out.write(`${JSON.stringify({ model_id: modelId, data }, null, 2)}\n`);
      return;
    }
    const client = (deps.createClient ?? (await import('../api/client.js')).createApiClient)((await resolveConnection(opts, io.env)).api);
    try {
      const result = await client.updateSettings(modelId, data);
      await out.write(`${result.details}\n`);
    } finally {
      await client.close();
    }
  } finally {
    out.release();
  }
}
