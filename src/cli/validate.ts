//! `mls validate`: loads the config file and reports every problem, or a one-line summary.
//! With `--check-sinks`, each sink's healthcheck is run too; without it nothing leaves the machine.
import { Option, type Command } from 'commander';
import { ConfigError, describeError, ExitCode } from '../errors.js';
import { scrubSecrets } from '../telemetry/secrets.js';

/**
 * Adds `mls validate --config <file> [--check-sinks]` to `program`. Sets `process.exitCode`:
 * 0, 78 for an invalid config, 1 when a sink's check fails.
 */
export function register(program: Command): void {
  program
    .command('validate')
    .description('check a config file and report every problem in it')
    .addOption(new Option('-c, --config <file>', 'path of the YAML config file').env('MLS_CONFIG').makeOptionMandatory())
    .option('--check-sinks', "also run each sink's healthcheck (connects to network sinks; writes nothing)")
    .action(async (opts: { config: string; checkSinks?: boolean }) => {
      const file = opts.config;
      const { loadConfig } = await import('./config.js');
      try {
        const config = await loadConfig(file);
        const names = config.sinks.map((s) => s.name).join(', ');
        const m = config.models.length;
        const s = config.sinks.length;
        process.stdout.write(`config OK: ${m} model${m === 1 ? '' : 's'}, ${s} sink${s === 1 ? '' : 's'} (${names})\n`);
        process.exitCode = ExitCode.ok;
        if (opts.checkSinks) {
          const [{ checkSinks, renderSinkChecks }, { createLogger }] = await Promise.all([import('./check-sinks.js'), import('../telemetry/logger.js')]);
          const checks = await checkSinks(config, createLogger({ level: 'warn' }));
          process.stdout.write(scrubSecrets(renderSinkChecks(checks)));
          if (checks.some((c) => !c.ok)) process.exitCode = ExitCode.failure;
        }
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
