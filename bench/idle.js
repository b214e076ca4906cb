// Idle: 1,000 models polled every 10 s with no new logs. CPU of the daemon process (share
// of one core, from /proc utime + stime over a measured span after a warm-up) and RSS.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSimChild } from './lib/sim.js';
import { connectInspector, inspectorUrl } from './lib/inspector.js';
import { summariseProfile } from './lib/profile.js';
import { TOKEN, baseConfig, cpuSeconds, ensureDir, memory, mb, round, say, sleep, spawnDaemon, workDir, writeConfig } from './lib/util.js';

export async function run({ quick, resultsDir }) {
  const warmupMs = quick ? 60_000 : 300_000;
  const spanMs = quick ? 20_000 : 60_000;
  const models = Array.from({ length: 1000 }, (_, i) => `idle-model-${String(i + 1).padStart(4, '0')}`);
  const w = workDir('idle');
  const sim = await startSimChild({ token: TOKEN, models, ratePerSec: 0, pageSize: 1000, seed: 3 });
  let d;
  try {
    const cfg = writeConfig(
      w.dir,
      baseConfig(sim.url, join(w.dir, 'state', 'state.db'), {
        // Every model polled every 10 s: 100 fresh windows per second plus the re-reads.
        // The default rate_limit (20/s) would stretch each model's interval to ~50 s.
        poll: { interval: '10s', start_at: 'now', rate_limit: 'none' },
        models: models.map((id) => ({ id })),
        sinks: [{ name: 'files', type: 'file', path: join(w.dir, 'out', '{model_id}.ndjson') }],
      }),
    );
    // The inspector only listens until the CPU figure is taken; then it profiles a further span.
    d = spawnDaemon(cfg, { nodeArgs: ['--inspect=127.0.0.1:0'] });
    say('idle', `daemon pid ${d.pid}; warming up for ${warmupMs / 1000} s`);
    await sleep(warmupMs);
    if (!d.alive()) throw new Error(`daemon exited; stderr: ${d.stderr().slice(-2000)}`);
    const c0 = cpuSeconds(d.pid);
    const r0 = (await sim.stats()).logsRequests;
    const t0 = performance.now();
    let peakRss = 0;
    const until = t0 + spanMs;
    while (performance.now() < until) {
      peakRss = Math.max(peakRss, memory(d.pid).rss);
      await sleep(500);
    }
    const c1 = cpuSeconds(d.pid);
    const r1 = (await sim.stats()).logsRequests;
    const span = (performance.now() - t0) / 1000;
    const mem = memory(d.pid);
    const total = cpuSeconds(d.pid);
    const cpuPercent = round((100 * (c1 - c0)) / span, 2);
    const inspector = await connectInspector(await inspectorUrl(d.stderr));
    const usage = await inspector.memoryUsage();
    const profMs = quick ? 10_000 : 20_000;
    const prof = await inspector.profile(profMs);
    // What is live, as opposed to garbage not yet collected: a full GC, then the same figures.
    await inspector.collectGarbage();
    const afterGc = await inspector.memoryUsage();
    const rssAfterGc = memory(d.pid).rss;
    inspector.close();
    writeFileSync(join(ensureDir(join(resultsDir, 'profile')), 'idle.cpuprofile'), JSON.stringify(prof));
    const summary = summariseProfile(prof, 15);
    say('idle', `CPU ${cpuPercent}% of one core, RSS ${mb(mem.rss)} MB, ${round((r1 - r0) / span, 1)} requests/s`);
    return {
      models: models.length,
      interval_s: 10,
      measured_after_s: Math.round(warmupMs / 1000),
      measured_span_s: round(span, 1),
      cpu_percent: cpuPercent,
      cpu_seconds_since_start: round(total, 2),
      rss_mb: mb(mem.rss),
      rss_peak_in_span_mb: mb(Math.max(peakRss, mem.rss)),
      rss_hwm_mb: mb(mem.hwm),
      requests_per_sec: round((r1 - r0) / span, 1),
      memory_usage_mb: Object.fromEntries(Object.entries(usage).map(([k, v]) => [k, mb(v)])),
      memory_usage_after_full_gc_mb: { ...Object.fromEntries(Object.entries(afterGc).map(([k, v]) => [k, mb(v)])), rss_proc: mb(rssAfterGc) },
      profile: { file: 'bench/results/profile/idle.cpuprofile', span_s: profMs / 1000, ...summary },
      note: quick ? 'quick mode: measured after ~60 s, before the first lookback (5m) re-reads begin' : 'measured after 5 minutes (lookback re-reads included)',
      target_cpu_percent: 3,
      target_rss_mb: 120,
    };
  } finally {
    await d?.stop();
    await sim.close();
    w.cleanup();
  }
}
