//! `mls validate`: loads the config file and reports every problem, or a one-line summary.
import { Option, type Command } from 'commander';
import { ConfigError, describeError, ExitCode } from '../errors.js';
import { loadConfig } from './config.js';

/** Adds `mls validate --config <file>` to `program`. Sets `process.exitCode` (0, or 78 for an invalid config). */
export function register(program: Command): void {
  program
    .command('validate')
    .description('check a config file and report every problem in it')
    .addOption(new Option('-c, --config <file>', 'path of the YAML config file').env('MLS_CONFIG').makeOptionMandatory())
    .action(async (opts: { config: string }) => {
      const file = opts.config;
      try {
        const config = await loadConfig(file);
        const names = config.sinks.map((s) => s.name).join(', ');
        const m = config.models.length;
        const s = config.sinks.length;
        process.stdout.write(`config OK: ${m} model${m === 1 ? '' : 's'}, ${s} sink${s === 1 ? '' : 's'} (${names})\n`);
        process.exitCode = ExitCode.ok;
      } catch (err) {
        if (err instanceof ConfigError) {
          const problems = err.problems.length > 0 ? err.problems : [err.message];
          process.stderr.write(problems.map((p) => `${file}: ${p}\n`).join(''));
          process.exitCode = ExitCode.config;
        } else {
          process.stderr.write(`${file}: ${describeError(err)}\n`);
          process.exitCode = ExitCode.failure;
        }
      }
    });
}
