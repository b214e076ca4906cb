#!/usr/bin/env -S MALLOC_ARENA_MAX=1 node --max-semi-space-size=1 --max-old-space-size=512
//! The `mls` executable. The settings above keep the resident set near the live heap: a
//! small young generation, an old generation that is collected long before the machine's
//! memory is the limit (raise it through NODE_OPTIONS for very large pages), and one
//! malloc arena instead of one per thread (memory freed by GC, compiler and I/O threads is
//! reused instead of sitting in per-thread arenas; no throughput cost was measured).
import { buildProgram, reportError } from './program.js';

try {
  await buildProgram().parseAsync(process.argv);
} catch (err) {
  process.exitCode = reportError(err);
}
