//! The definitions of `mls settings plan|apply|history` (what they do is in settings-apply.ts,
//! loaded when one of them runs: the other commands start without the state file's code).
import type { Command } from 'commander';
import { configOption, runCommand, type CommandIo } from './common.js';
import type { SelectOptions } from './settings-apply.js';

const apply = () => import('./settings-apply.js');

const collect = (value: string, previous: string[]) => [...previous, value];

/** Adds `plan`, `apply` and `history` to `mls settings`. */
export function registerSettingsAsCode(settings: Command, io: CommandIo): void {
  settings
    .command('plan')
    .description('show, for each model, the settings fields apply would send: those declared in the config that differ from what mls last applied')
    .addOption(configOption())
    .option('--model <id>', 'only this model (repeatable)', collect, [])
    .option('--all', 'plan every declared field, not only those that changed')
    .option('--json', 'print the plan as JSON')
    .option('--detailed-exitcode', 'exit 0 when nothing is pending, 6 when changes are pending')
    .action(runCommand(io, async (opts: SelectOptions & { all?: boolean; json?: boolean; detailedExitcode?: boolean }) => (await apply()).runPlan(opts, io)));
  settings
    .command('apply')
    .description('send each model the settings fields that changed since mls last applied them (one request per model), and record them')
    .addOption(configOption())
    .option('--model <id>', 'only this model (repeatable)', collect, [])
    .option('--all', 'send every declared field, not only those that changed')
    .option('--dry-run', 'print what would be sent; send and record nothing')
    .option('--record-only', 'record the declared values as applied without sending them (adopt settings already in place)')
    .action(runCommand(io, async (opts: SelectOptions & { all?: boolean; dryRun?: boolean; recordOnly?: boolean }) => (await apply()).runApply(opts, io)));
  settings
    .command('history')
    .description('list the settings applies mls made: time, model, outcome, fields, details')
    .addOption(configOption())
    .option('--model <id>', 'only this model')
    .option('--json', 'print the history as JSON')
    .action(runCommand(io, async (opts: { config: string; model?: string; json?: boolean }) => (await apply()).runHistory(opts, io)));
}
