// Freshness: how soon entries reach the file sink, from their own time, with the default
// poll settings (adaptive polling, settle: auto), against a simulator whose entries become
// visible some time after their time. Scenarios, each with its own simulator and daemon,
// run side by side:
// - fast:   6 active models, each entry visible 0–0.5 s after its time; 6 quiet models;
// - late6:  6 active models, each entry visible 0–6 s after its time;
// - tail10: 6 active models, 90 % visible within 0.5 s and 10 % 0–10 s late;
// and, for comparison, fast and late6 with the settings of earlier versions (every model
// polled every interval, settle 2s). Lag = line seen in the file − the entry's own time.
// Also: requests per minute of the quiet models, fetch amplification (entries served ÷
// entries delivered), the entries of the measured span missing from the file, and those
// first delivered by the read at `lookback` (a lag of at least the lookback: no other read
// reaches a span that old), which no entry visible within the first re-read age should wait for.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { entryMs, follower } from './lib/follow.js';
import { startSimChild } from './lib/sim.js';
import { TOKEN, baseConfig, quantile, round, say, sleep, spawnDaemon, workDir, writeConfig } from './lib/util.js';

const RATE = 20;
/** The default `poll.lookback`, which the scenarios keep. */
const LOOKBACK_MS = 300_000;
const ACTIVE = 6;
const QUIET = 6;

const SCENARIOS = {
  fast: { ingestDelayMs: { min: 0, max: 500 }, quiet: QUIET, targets: { median_ms: 3_000, p95_ms: 5_000 } },
  late6: { ingestDelayMs: { min: 0, max: 6_000 }, quiet: 0, targets: { p95_ms: 10_000 } },
  tail10: { ingestDelayMs: { min: 0, max: 500 }, lateArrivals: { share: 0.1, delayMs: { min: 0, max: 10_000 } }, quiet: 0, targets: { p95_ms: 14_000 } },
};

/** The poll settings of earlier versions: one poll per interval, settle fixed at 2 s. */
const EARLIER = { settle: '2s', min_interval: '10s' };

async function runScenario(name, spec, { warmupMs, spanMs, poll: pollSettings = {}, label = name }) {
  const active = Array.from({ length: ACTIVE }, (_, i) => `${name}-active-${i}`);
  const quiet = Array.from({ length: spec.quiet }, (_, i) => `${name}-quiet-${i}`);
  const models = [...active, ...quiet];
  const w = workDir(`fresh-${label}`);
  const sim = await startSimChild({
    token: TOKEN,
    models,
    ratePerSec: RATE,
    ratePerModel: Object.fromEntries(quiet.map((id) => [id, 0])),
    ingestDelayMs: spec.ingestDelayMs,
    ...(spec.lateArrivals ? { lateArrivals: spec.lateArrivals } : {}),
    pageSize: 500,
    seed: 17,
  });
  let d;
  try {
    const outDir = join(w.dir, 'out');
    const cfg = writeConfig(
      w.dir,
      baseConfig(sim.url, join(w.dir, 'state', 'state.db'), {
        poll: { start_at: 'now', ...pollSettings },
        models: models.map((id) => ({ id })),
        sinks: [{ name: 'files', type: 'file', path: join(outDir, '{model_id}.ndjson') }],
      }),
    );
    d = spawnDaemon(cfg);
    const from = Date.now() + warmupMs;
    const to = from + spanMs;
    const lags = [];
    const seen = new Map();
    let atLookback = 0;
    const poll = follower(outDir, (line, arrival) => {
      const e = JSON.parse(line);
      const t = entryMs(e.time);
      if (t < from || t > to) return;
      lags.push(arrival - t);
      const k = `${e.model_id}\u0000${e.time}\u0000${e.stream}\u0000${e.log}`;
      const copies = (seen.get(k) ?? 0) + 1;
      seen.set(k, copies);
      if (copies === 1 && arrival - t >= LOOKBACK_MS) atLookback++;
    });
    let statsAtFrom;
    while (Date.now() < from) {
      poll();
      await sleep(20);
    }
    statsAtFrom = await sim.stats();
    // Watch until every entry of [from, to] had time to arrive: its delay (≤ 10 s), the settle, the first re-read and its batch.
    const end = to + 45_000;
    let statsAtTo;
    while (Date.now() < end) {
      poll();
      if (!statsAtTo && Date.now() >= to) statsAtTo = await sim.stats();
      await sleep(20);
    }
    if (!d.alive()) throw new Error(`daemon exited; stderr: ${d.stderr().slice(-2000)}`);
    const truthPath = join(w.dir, 'truth.ndjson');
    await sim.writeTruth(truthPath);
    const truth = [];
    for (const l of readFileSync(truthPath, 'utf8').split('\n')) {
      if (!l) continue;
      const e = JSON.parse(l);
      const t = entryMs(e.time);
      if (t >= from && t <= to) truth.push(`${e.model_id}\u0000${e.time}\u0000${e.stream}\u0000${e.log}`);
    }
    const expected = truth.length;
    const missingNow = () => {
      const left = new Map(seen);
      let missing = 0;
      for (const k of truth) {
        const n = left.get(k) ?? 0;
        if (n > 0) left.set(k, n - 1);
        else missing++;
      }
      return { missing, duplicated: [...left.values()].reduce((a, n) => a + n, 0) };
    };
    // Entries not there 45 s after the span are late, not necessarily lost: follow the file until
    // the read at lookback (5 minutes, and its piece of a minute) has passed the span.
    const lateBeyondDrain = missingNow().missing;
    if (lateBeyondDrain > 0) {
      say('freshness', `${label}: ${lateBeyondDrain} entries not delivered 45 s after the span; waiting for the read at lookback`);
      const last = to + LOOKBACK_MS + 90_000;
      while (Date.now() < last && missingNow().missing > 0) {
        for (let i = 0; i < 50; i++) {
          poll();
          await sleep(20);
        }
      }
    }
    const { missing, duplicated } = missingNow();
    lags.sort((a, b) => a - b);
    const minutes = spanMs / 60_000;
    const quietRequests = quiet.map((id) => ((statsAtTo.logsAnswersByModel[id] ?? 0) - (statsAtFrom.logsAnswersByModel[id] ?? 0)) / minutes);
    const activeRequests = active.map((id) => ((statsAtTo.logsAnswersByModel[id] ?? 0) - (statsAtFrom.logsAnswersByModel[id] ?? 0)) / minutes);
    const served = statsAtTo.entriesServed - statsAtFrom.entriesServed;
    const r = {
      entries_measured: lags.length,
      median_ms: Math.round(quantile(lags, 0.5)),
      p95_ms: Math.round(quantile(lags, 0.95)),
      p99_ms: Math.round(quantile(lags, 0.99)),
      max_ms: lags.length ? lags[lags.length - 1] : null,
      entries_expected: expected,
      // Not in the file 45 s after the span; first delivered by the read at lookback; never delivered.
      late_beyond_45s: lateBeyondDrain,
      delivered_at_lookback: atLookback,
      missing,
      duplicated,
      quiet_requests_per_min: quietRequests.length ? round(quietRequests.reduce((a, b) => a + b, 0) / quietRequests.length, 2) : null,
      active_requests_per_min: round(activeRequests.reduce((a, b) => a + b, 0) / activeRequests.length, 1),
      // Entries served while the span was produced ÷ entries produced in it (≈ delivered).
      amplification: expected > 0 ? round(served / expected, 2) : null,
      daemon_settings: pollSettings,
    };
    say('freshness', `${label}: median ${r.median_ms} ms, p95 ${r.p95_ms} ms, p99 ${r.p99_ms} ms over ${lags.length} entries; later than 45 s ${lateBeyondDrain}, first delivered by the read at lookback ${atLookback}, missing ${missing}; quiet ${r.quiet_requests_per_min ?? '-'} req/min; amplification ${r.amplification}`);
    return r;
  } finally {
    await d?.stop();
    await sim.close();
    w.cleanup();
  }
}

export async function run({ quick }) {
  const warmupMs = quick ? 30_000 : 60_000;
  const spanMs = quick ? 30_000 : 90_000;
  const opts = { warmupMs, spanMs };
  const runs = [
    ['fast', runScenario('fast', SCENARIOS.fast, opts)],
    ['late6', runScenario('late6', SCENARIOS.late6, opts)],
    ['tail10', runScenario('tail10', SCENARIOS.tail10, opts)],
    ['fast_earlier', runScenario('fast', SCENARIOS.fast, { ...opts, poll: EARLIER, label: 'fast-earlier' })],
    ['late6_earlier', runScenario('late6', SCENARIOS.late6, { ...opts, poll: EARLIER, label: 'late6-earlier' })],
  ];
  const out = {};
  for (const [k, p] of runs) out[k] = await p;
  return {
    scenarios: {
      fast: '6 active models × 20 entries/s visible 0–0.5 s after their time, 6 quiet models',
      late6: '6 active models × 20 entries/s visible 0–6 s after their time',
      tail10: '6 active models × 20 entries/s: 90 % visible within 0.5 s, 10 % 0–10 s late',
      earlier: 'the same with settle: 2s and min_interval: 10s (one poll per interval, as earlier versions)',
    },
    warmup_s: warmupMs / 1000,
    span_s: spanMs / 1000,
    targets: { fast: SCENARIOS.fast.targets, late6: SCENARIOS.late6.targets, tail10: SCENARIOS.tail10.targets, quiet_requests_per_min: 7, amplification: 3.5 },
    ...out,
    ratio_fast_median: round(out.fast_earlier.median_ms / out.fast.median_ms, 2),
    ratio_late6_p95: round(out.late6_earlier.p95_ms / out.late6.p95_ms, 2),
  };
}
