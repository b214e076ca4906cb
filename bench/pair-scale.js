// Two builds side by side at 10,000 models: build A and build B each poll their own
// simulator (the scale benchmark's load: 1 % of the models active, `rate_limit: 1200/s`) at
// the same time, and their CPU is read over the same seconds. The machine's drift from one
// hour to the next (13–21 % of a core for the same code) then hits both alike; what is left
// is the difference of the builds plus the pair's own spread. The order in which the two
// start alternates from round to round.
//
//   node bench/pair-scale.js [--rounds N] [--a <dist/cli/main.js of build A>] [--b <…of B>]
//                            [--env-a '{"NAME":"value"}'] [--env-b '{…}']
//
// Both default to this checkout's build; give the same build twice (an A/A pair) to see the
// spread. Build B's commit is usually a `git worktree` with its own `npm run build`. Prints
// each round and, at the end, the mean of B − A for the whole process and per kind of
// thread (points of one core).
import { resolve } from 'node:path';
import { scaleConfig, scaleModels, startScaleSim } from './lib/scale-load.js';
import { MLS, cpuSeconds, memory, round, sleep, spawnDaemon, threadCpu, workDir, writeConfig } from './lib/util.js';

const WARMUP_MS = 45_000;
const MEASURE_MS = 30_000;

function parseArgs(argv) {
  const o = { rounds: 3, a: MLS, b: MLS, envA: {}, envB: {} };
  for (let i = 0; i < argv.length; i++) {
    const [k, v] = [argv[i], argv[i + 1]];
    if (k === '--rounds') o.rounds = Number(v);
    else if (k === '--a') o.a = resolve(v);
    else if (k === '--b') o.b = resolve(v);
    else if (k === '--env-a') o.envA = JSON.parse(v);
    else if (k === '--env-b') o.envB = JSON.parse(v);
    else {
      process.stderr.write(`pair-scale: unknown argument ${k}\n`);
      process.exit(2);
    }
    i++;
  }
  if (!Number.isInteger(o.rounds) || o.rounds < 1) throw new Error('--rounds must be a whole number of at least 1');
  return o;
}

/** Starts one side: its simulator, its daemon (`mls` at `mlsPath`, extra environment `env`). */
async function startSide(name, mlsPath, env, ids, active) {
  const w = workDir(`pair-${name}`);
  const sim = await startScaleSim(ids, active);
  const cfg = writeConfig(w.dir, scaleConfig(sim.url, w.dir, ids));
  // The young generation docs/operating.md advises for thousands of models, for both builds.
  const d = spawnDaemon(cfg, { mls: mlsPath, env, nodeArgs: ['--max-semi-space-size=8'] });
  return {
    name,
    d,
    sim,
    async stop() {
      await d.stop();
      await sim.close();
      w.cleanup();
    },
  };
}

async function oneRound(o, n, ids, active) {
  const order = n % 2 === 0 ? [['A', o.a, o.envA], ['B', o.b, o.envB]] : [['B', o.b, o.envB], ['A', o.a, o.envA]];
  const sides = [];
  try {
    for (const [name, path, env] of order) sides.push(await startSide(name, path, env, ids, active));
    await sleep(WARMUP_MS);
    for (const s of sides) if (!s.d.alive()) throw new Error(`daemon ${s.name} exited; stderr: ${s.d.stderr()}`);
    const before = sides.map((s) => ({ cpu: cpuSeconds(s.d.pid), threads: threadCpu(s.d.pid) }));
    const t0 = performance.now();
    await sleep(MEASURE_MS);
    const seconds = (performance.now() - t0) / 1000;
    const out = {};
    sides.forEach((s, i) => {
      const t = threadCpu(s.d.pid);
      const share = (x) => (x / seconds) * 100;
      out[s.name] = {
        cpu: share(cpuSeconds(s.d.pid) - before[i].cpu),
        main: share(t.main - before[i].threads.main),
        v8: share(t.v8 - before[i].threads.v8),
        pool: share(t.pool - before[i].threads.pool),
        rssMb: memory(s.d.pid).rss / 2 ** 20,
      };
    });
    return out;
  } finally {
    for (const s of sides) await s.stop();
  }
}

const o = parseArgs(process.argv.slice(2));
const { ids, active } = scaleModels(100);
const show = (x) => `${round(x.cpu, 1)} % (main ${round(x.main, 1)}, v8 ${round(x.v8, 1)}, pool ${round(x.pool, 1)}), RSS ${round(x.rssMb, 0)} MB`;
const diffs = [];
for (let n = 0; n < o.rounds; n++) {
  const r = await oneRound(o, n, ids, active);
  const d = Object.fromEntries(['cpu', 'main', 'v8', 'pool'].map((k) => [k, r.B[k] - r.A[k]]));
  diffs.push(d);
  process.stdout.write(`round ${n + 1} (${n % 2 === 0 ? 'A' : 'B'} started first): A ${show(r.A)} | B ${show(r.B)} | B − A ${round(d.cpu, 2)} (main ${round(d.main, 2)})\n`);
}
const mean = (k) => diffs.reduce((a, d) => a + d[k], 0) / diffs.length;
process.stdout.write(`mean B − A over ${diffs.length} rounds: ${round(mean('cpu'), 2)} points (main ${round(mean('main'), 2)}, v8 ${round(mean('v8'), 2)}, pool ${round(mean('pool'), 2)})\n`);
