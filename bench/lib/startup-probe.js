// Times the pieces of a daemon start in a fresh process: `node startup-probe.js <what> [state]`.
//   program: importing the CLI (every command module and its dependencies)
//   daemon:  importing the daemon and the config modules (with the sink types) only
//   store:   opening a state file (counting the journal)
const what = process.argv[2];
const t0 = performance.now();
const out = {};
if (what === 'program') {
  await import('../../dist/cli/program.js');
  out.import_ms = performance.now() - t0;
} else if (what === 'daemon') {
  await import('../../dist/daemon/index.js');
  await import('../../dist/cli/config.js');
  out.import_ms = performance.now() - t0;
} else if (what === 'store') {
  const { StateStore } = await import('../../dist/journal/store.js');
  const t1 = performance.now();
  const store = StateStore.open(process.argv[3]);
  out.open_ms = performance.now() - t1;
  const t2 = performance.now();
  for (let i = 0; i < 1000; i++) store.getCheckpoint(`model-${String(i + 1).padStart(4, '0')}`);
  out.checkpoints_1000_ms = performance.now() - t2;
  store.close();
}
process.stdout.write(JSON.stringify(out));
