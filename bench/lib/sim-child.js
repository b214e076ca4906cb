// Runs the embedded simulator in its own process so that it does not share a core with
// the code under test. Driven over IPC by ./sim.js: {id, cmd, ...} in, {id, result} out.
import { writeFileSync } from 'node:fs';
import { startSimulator } from '../../dist/simulator/index.js';

let sim;
let lateTimer;
let lateInjected = 0;

/**
 * Late arrivals for a share of the entries: every 50 ms, inject entries timestamped now
 * that become visible after a uniform delay in [0, maxDelayMs].
 */
function startLate(models, ratePerSec, maxDelayMs) {
  let due = 0;
  let last = Date.now();
  let turn = 0;
  lateTimer = setInterval(() => {
    const now = Date.now();
    due += ((now - last) / 1000) * ratePerSec * models.length;
    last = now;
    while (due >= 1) {
      due -= 1;
      const model = models[turn++ % models.length];
      const n = ++lateInjected;
      const time = `${new Date(now).toISOString().slice(0, 23)}${String(n % 1_000_000).padStart(6, '0')}Z`;
      sim.inject(model, [{ time, log: `late entry ${n} of ${model}: request served`, stream: 'stdout' }], Math.floor(Math.random() * (maxDelayMs + 1)));
    }
  }, 50);
}

const handlers = {
  async start({ options, late }) {
    const wallStart = Date.now();
    sim = await startSimulator(options);
    if (late) startLate(options.models, late.ratePerSec, late.maxDelayMs);
    return { url: sim.url, port: sim.port, startMs: wallStart, pid: process.pid };
  },
  stats() {
    return { ...sim.stats(), lateInjected };
  },
  resetStats() {
    sim.resetStats();
    return true;
  },
  stopProducing() {
    if (lateTimer) clearInterval(lateTimer);
    lateTimer = undefined;
    sim.stopProducing();
    return { atMs: Date.now() };
  },
  count() {
    return sim.groundTruth().length;
  },
  writeTruth({ path }) {
    const truth = sim.groundTruth();
    writeFileSync(path, truth.map((e) => JSON.stringify(e)).join('\n') + (truth.length ? '\n' : ''));
    return truth.length;
  },
  async close() {
    if (lateTimer) clearInterval(lateTimer);
    await sim?.close();
    setImmediate(() => process.exit(0));
    return true;
  },
};

process.on('message', async (msg) => {
  try {
    const result = await handlers[msg.cmd](msg);
    process.send({ id: msg.id, result });
  } catch (err) {
    process.send({ id: msg.id, error: String(err?.stack ?? err) });
  }
});
process.on('disconnect', () => process.exit(0));
