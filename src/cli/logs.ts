//! `mls logs`: prints the logs of one model for a time window, or follows them like
//! `kubectl logs -f`. This is its definition and its options; what it does is in logs-run.ts,
//! loaded when it runs (the other commands start without the page reader and the processing).
import type { Command } from 'commander';
import { addApiOptions, processIo, runCommand, type ApiCliOptions, type CommandIo } from './common.js';

/** Options of `mls logs` as commander parses them. */
export interface LogsCliOptions extends ApiCliOptions {
  model: string;
  since?: string;
  from?: string;
  to?: string;
  follow?: boolean;
  interval: string;
  output: string;
  lessLogs?: boolean;
  process?: boolean;
}

/** The window printed when neither --since nor --from is given. */
export const DEFAULT_SINCE = '15m';

/** Adds `mls logs` to the program. */
export function register(program: Command, io: CommandIo = processIo()): void {
  const cmd = program
    .command('logs')
    .description('print the logs of a model for a time window, or follow them')
    .requiredOption('--model <id>', 'model whose logs to print')
    .option('--since <duration>', `window ending now, e.g. 15m or 2h (default: ${DEFAULT_SINCE})`)
    .option('--from <time>', 'start of the window, ISO 8601 with Z or an offset')
    .option('--to <time>', 'end of the window (default: now)')
    .option('-f, --follow', 'keep printing new lines until interrupted')
    .option('--interval <duration>', 'time between polls when following', '2s')
    .option('--output <format>', 'ndjson or text', 'ndjson')
    .option('--less-logs', 'ask the service for fewer logs (is_less_logs)')
    .option('--process', 'print records as the daemon ships them: tracebacks whole, levels from the text, JSON lines structured');
  addApiOptions(cmd);
  cmd.action(runCommand(io, async (opts: LogsCliOptions) => (await import('./logs-run.js')).runLogs(opts, io)));
}
