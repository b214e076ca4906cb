//! The command tree of `mls`: one file per command, registered here.
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { ExitCode, MlsError, ConfigError, describeError } from '../errors.js';
import { scrubSecrets } from '../telemetry/secrets.js';
import { register as registerRun } from './run.js';
import { register as registerDemo } from './demo.js';
import { register as registerValidate } from './validate.js';
import { register as registerLogs } from './logs.js';
import { register as registerSettings } from './settings.js';
import { register as registerSimulate } from './simulate.js';
import { register as registerStatus } from './status.js';
import { register as registerDlq } from './dlq.js';
import { register as registerState } from './state.js';
import { register as registerInit } from './init.js';
import { register as registerTop } from './top.js';
import { register as registerTap } from './tap.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** Builds the command tree (exported for in-process tests). */
export function buildProgram(): Command {
  const program = new Command('mls')
    .description('model-log-shipper: ships the logs of deployed models to files, OTLP, webhooks and stdout')
    // With the runtime's: a release brings its own Node.js, and a bug report needs both.
    .version(`${pkg.version} (Node.js ${process.version})`, '-V, --version')
    .showHelpAfterError()
    .exitOverride();
  for (const register of [registerRun, registerDemo, registerInit, registerValidate, registerLogs, registerSettings, registerSimulate, registerStatus, registerTop, registerTap, registerDlq, registerState]) {
    register(program);
  }
  for (const cmd of program.commands) cmd.exitOverride();
  return program;
}

/** Prints an error the way every command does and returns the exit code. */
export function reportError(err: unknown): number {
  if (err instanceof CommanderError) {
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return ExitCode.ok;
    return ExitCode.usage;
  }
  if (err instanceof ConfigError) {
    process.stderr.write(`mls: ${scrubSecrets(err.message)}\n`);
    // the message often lists the problems already
    for (const p of err.problems) if (!err.message.includes(p)) process.stderr.write(`  ${scrubSecrets(p)}\n`);
    return err.exitCode;
  }
  if (err instanceof MlsError) {
    process.stderr.write(`mls: ${scrubSecrets(describeError(err))}\n`);
    return err.exitCode;
  }
  process.stderr.write(`mls: unexpected error: ${scrubSecrets(err instanceof Error ? (err.stack ?? err.message) : String(err))}\n`);
  return ExitCode.failure;
}

