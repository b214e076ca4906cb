//! `mls validate`: loads the config file and reports every problem, or a one-line summary.
//! `--no-env` checks the file without its environment (unset variables and a token from
//! outside the file stand for any value), for CI. Nothing leaves the machine unless asked:
//! `--check-sinks` runs each sink's healthcheck, `--check-service` asks the service once per model.
import type { Command } from 'commander';
import type { StandIns } from '../config/index.js';
import { ConfigError, describeError, ExitCode, UsageError } from '../errors.js';
import { scrubSecrets } from '../telemetry/secrets.js';
import { configOption } from './common.js';

interface ValidateOptions {
  config: string;
  env: boolean;
  checkSinks?: boolean;
  checkService?: boolean;
}

/**
 * Adds `mls validate --config <file> [--no-env] [--check-sinks] [--check-service]` to
 * `program`. Sets `process.exitCode`: 0, 78 for an invalid config, 1 when a sink's check
 * fails, 3 when the service refused the token, 4 when it refused or did not answer a model.
 */
export function register(program: Command): void {
  program
    .command('validate')
    .description('check a config file and report every problem in it')
    .addOption(configOption())
    .option('--no-env', 'check without the environment: an unset ${VAR}, and a token from outside the file, stand for any value (for CI)')
    .option('--check-sinks', "also run each sink's healthcheck (connects to network sinks; writes nothing)")
    .option('--check-service', 'also ask the service once per model for the logs of the last second (is the token accepted, is the model known?)')
    .action(async (opts: ValidateOptions) => {
      const file = opts.config;
      if (!opts.env && opts.checkService) throw new UsageError('--check-service needs the token: it cannot be combined with --no-env');
      const { loadConfig } = await import('./config.js');
      let standIns: StandIns | undefined;
      try {
        const config = await loadConfig(file, process.env, opts.env ? {} : { noEnv: true, onStandIns: (s) => (standIns = s) });
        const m = config.models.length;
        const s = config.sinks.length;
        process.stdout.write(`config OK: ${m} model${m === 1 ? '' : 's'}, ${s} sink${s === 1 ? '' : 's'} (${config.sinks.map((sink) => sink.name).join(', ')})\n`);
        if (standIns) process.stdout.write(describeStandIns(standIns));
        process.exitCode = ExitCode.ok;
        if (opts.checkSinks) {
          const [{ checkSinks, renderSinkChecks }, { createLogger }] = await Promise.all([import('./check-sinks.js'), import('../telemetry/logger.js')]);
          const checks = await checkSinks(config, createLogger({ level: 'warn' }));
          process.stdout.write(scrubSecrets(renderSinkChecks(checks)));
          if (checks.some((c) => !c.ok)) process.exitCode = ExitCode.failure;
        }
        if (opts.checkService) {
          const { checkService, renderServiceChecks } = await import('./check-service.js');
          const report = renderServiceChecks(await checkService(config));
          process.stdout.write(scrubSecrets(report.text));
          if (report.exitCode !== ExitCode.ok) process.exitCode = report.exitCode;
        }
      } catch (err) {
        if (err instanceof ConfigError) {
          const problems = err.problems.length > 0 ? err.problems : [err.message];
          process.stderr.write(problems.map((p) => `${file}: ${p}\n`).join(''));
          process.exitCode = ExitCode.config;
        } else {
          process.stderr.write(`${file}: ${scrubSecrets(describeError(err))}\n`);
          process.exitCode = ExitCode.failure;
        }
      }
    });
}

/** What stood in for the environment, said after the summary of `--no-env`. */
function describeStandIns(s: StandIns): string {
  const vars = s.variables.length === 0 ? [] : [`unset variable${s.variables.length === 1 ? '' : 's'} ${s.variables.map((v) => `\${${v}}`).join(', ')}`];
  const token = s.token ? ['the API token (it comes from outside the file)'] : [];
  const what = [...vars, ...token];
  return what.length === 0 ? 'checked without the environment; the file needs nothing from it\n' : `checked without the environment; these stood for any value: ${what.join('; ')}\n`;
}
