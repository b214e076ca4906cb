#!/usr/bin/env node
//! The `mls` executable.
import { buildProgram, reportError } from './program.js';

try {
  await buildProgram().parseAsync(process.argv);
} catch (err) {
  process.exitCode = reportError(err);
}
