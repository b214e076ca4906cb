#!/usr/bin/env -S node --max-semi-space-size=1 --max-old-space-size=512
//! The `mls` executable. The flags above keep the resident set near the live heap: a
//! small young generation, and an old generation that is collected long before the
//! machine's memory is the limit (raise it through NODE_OPTIONS for very large pages).
import { buildProgram, reportError } from './program.js';

try {
  await buildProgram().parseAsync(process.argv);
} catch (err) {
  process.exitCode = reportError(err);
}
