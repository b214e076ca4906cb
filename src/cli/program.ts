//! The command tree of `mls`: one file per command, registered here.
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
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
