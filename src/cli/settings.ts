//! The definitions of `mls settings`: `update` changes the settings of one model (only the
//! settings given on the command line are sent; every value is checked before any request is
//! made); `plan`, `apply` and `history` work on the settings declared in the config. What they
//! do is in settings-apply.ts, loaded when one of them runs: the other commands start without
//! the state file's code.
import type { Command } from 'commander';
import { addApiOptions, configOption, processIo, runCommand, type ApiCliOptions, type CommandIo } from './common.js';
import type { SelectOptions } from './settings-apply.js';

const run = () => import('./settings-apply.js');

const collect = (value: string, previous: string[]) => [...previous, value];

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

/** Adds `mls settings` and its commands to the program. */
export function register(program: Command, io: CommandIo = processIo()): void {
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
  update.action(runCommand(io, async (opts: SettingsUpdateCliOptions) => (await run()).runSettingsUpdate(opts, io)));
  settings
    .command('plan')
    .description('show, for each model, the settings fields apply would send: those declared in the config that differ from what mls last applied')
    .addOption(configOption())
    .option('--model <id>', 'only this model (repeatable)', collect, [])
    .option('--all', 'plan every declared field, not only those that changed')
    .option('--json', 'print the plan as JSON')
    .option('--detailed-exitcode', 'exit 0 when nothing is pending, 6 when changes are pending')
    .action(runCommand(io, async (opts: SelectOptions & { all?: boolean; json?: boolean; detailedExitcode?: boolean }) => (await run()).runPlan(opts, io)));
  settings
    .command('apply')
    .description('send each model the settings fields that changed since mls last applied them (one request per model), and record them')
    .addOption(configOption())
    .option('--model <id>', 'only this model (repeatable)', collect, [])
    .option('--all', 'send every declared field, not only those that changed')
    .option('--dry-run', 'print what would be sent; send and record nothing')
    .option('--record-only', 'record the declared values as applied without sending them (adopt settings already in place)')
    .action(runCommand(io, async (opts: SelectOptions & { all?: boolean; dryRun?: boolean; recordOnly?: boolean }) => (await run()).runApply(opts, io)));
  settings
    .command('history')
    .description('list the settings applies mls made: time, model, outcome, fields, details')
    .addOption(configOption())
    .option('--model <id>', 'only this model')
    .option('--json', 'print the history as JSON')
    .action(runCommand(io, async (opts: { config: string; model?: string; json?: boolean }) => (await run()).runHistory(opts, io)));
}
