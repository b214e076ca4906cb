// Memory under backlog: the only sink is down (a webhook to a closed port, retried
// forever) while millions of entries arrive; the journal keeps all of them. Reports the
// daemon's peak RSS and the state file's bytes per journal entry.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startSimChild } from './lib/sim.js';
import { connectInspector, inspectorUrl } from './lib/inspector.js';
import { TOKEN, baseConfig, closedPort, memory, mb, openStateReadonly, round, say, sleep, spawnDaemon, waitFor, workDir, writeConfig } from './lib/util.js';

const size = (p) => (existsSync(p) ? statSync(p).size : 0);

export async function run({ quick }) {
  const total = quick ? 500_000 : 5_000_000;
  const timeoutMs = quick ? 120_000 : 480_000;
  const models = ['backlog-a', 'backlog-b', 'backlog-c', 'backlog-d'];
  const historyMs = 3_600_000;
  const rate = total / models.length / (historyMs / 1000);
  const w = workDir('backlog');
  const sim = await startSimChild({ token: TOKEN, models, ratePerSec: rate, historyMs, pageSize: 1000, order: 'sorted', seed: 7 }, { heapMb: 6144 });
  let d;
  try {
    const { atMs: stopMs } = await sim.stopProducing();
    const fromMs = sim.startMs - historyMs - 1000;
    // The daemon's first window ends `settle` (2 s) before its start: let it cover every entry.
    await sleep(Math.max(0, stopMs + 2500 - Date.now()));
    const port = await closedPort();
    const statePath = join(w.dir, 'state', 'state.db');
    const cfg = writeConfig(
      w.dir,
      baseConfig(sim.url, statePath, {
        poll: { interval: '10s', start_at: new Date(fromMs).toISOString(), max_window: '2h', rate_limit: 'none' },
        models: models.map((id) => ({ id })),
        sinks: [{ name: 'down', type: 'webhook', url: `http://127.0.0.1:${port}/ingest`, timeout: '2s' }],
        buffer: { max_entries: 20_000_000, max_bytes: '64GiB', when_full: 'block' },
      }),
    );
    // The inspector reads the daemon's own heap figures (process.memoryUsage) along the way.
    d = spawnDaemon(cfg, { nodeArgs: ['--inspect=127.0.0.1:0'] });
    const inspector = await connectInspector(await inspectorUrl(d.stderr));
    let peak = 0;
    let state;
    const timeline = [];
    let lastMark = 0;
    const sampler = setInterval(() => {
      try {
        const m = memory(d.pid);
        peak = Math.max(peak, m.rss);
        const now = performance.now();
        if (state && now - lastMark >= (quick ? 2000 : 10_000)) {
          lastMark = now;
          const point = { s: Math.round((now - d.startedAt) / 1000), entries: state.lastSeq(), rss_mb: mb(m.rss), anon_mb: mb(m.anon) };
          timeline.push(point);
          inspector.memoryUsage().then(
            (u) => Object.assign(point, { heap_used_mb: mb(u.heapUsed), heap_total_mb: mb(u.heapTotal), external_mb: mb(u.external) }),
            () => {},
          );
        }
      } catch {
        /* exited */
      }
    }, 100);
    let complete = true;
    try {
      await waitFor(
        () => {
          if (!d.alive()) throw new Error('daemon exited');
          if (!existsSync(statePath)) return false;
          state ??= openStateReadonly(statePath);
          const cps = state.checkpoints();
          return cps.length === models.length && cps.every((c) => c.watermarkMs !== undefined && c.watermarkMs >= stopMs && c.window === undefined);
        },
        { everyMs: 250, timeoutMs, what: 'every model to be fetched to the end' },
      );
    } catch (err) {
      if (!d.alive()) throw new Error(`${err.message}; daemon stderr: ${d.stderr().slice(-2000)}`);
      complete = false;
      say('backlog', `not complete after ${timeoutMs / 1000} s: reporting what was reached`);
    }
    const seconds = (performance.now() - d.startedAt) / 1000;
    // Keep sampling a little: the journal is complete, delivery keeps failing.
    await sleep(2000);
    clearInterval(sampler);
    const mem = memory(d.pid);
    peak = Math.max(peak, mem.hwm);
    const usage = await inspector.memoryUsage();
    // What is live, as opposed to garbage not yet collected: a full GC, then the same figures.
    await inspector.collectGarbage();
    const afterGc = await inspector.memoryUsage();
    inspector.close();
    const entries = state?.lastSeq() ?? 0;
    const sinks = state?.sinks() ?? [];
    state?.close();
    const disk = { db: size(statePath), wal: size(`${statePath}-wal`), shm: size(`${statePath}-shm`) };
    await d.stop();
    const after = { db: size(statePath), wal: size(`${statePath}-wal`) };
    say('backlog', `${entries} entries held in ${round(seconds, 1)} s; peak RSS ${mb(peak)} MB; state ${mb(disk.db)} MB + WAL ${mb(disk.wal)} MB`);
    return {
      target_entries: total,
      journal_entries: entries,
      complete,
      ingest_seconds: round(seconds, 1),
      entries_per_sec: Math.round(entries / seconds),
      sink_cursor: sinks[0]?.cursor ?? null,
      peak_rss_mb: mb(peak),
      rss_at_end_mb: mb(mem.rss),
      rss_anon_at_end_mb: mb(mem.anon),
      rss_file_at_end_mb: mb(mem.file),
      memory_usage_at_end_mb: Object.fromEntries(Object.entries(usage).map(([k, v]) => [k, mb(v)])),
      memory_usage_after_full_gc_mb: Object.fromEntries(Object.entries(afterGc).map(([k, v]) => [k, mb(v)])),
      rss_timeline: timeline,
      state_bytes: disk.db,
      wal_bytes: disk.wal,
      disk_bytes_per_entry: entries > 0 ? round((disk.db + disk.wal) / entries, 1) : null,
      disk_bytes_per_entry_after_clean_stop: entries > 0 ? round((after.db + after.wal) / entries, 1) : null,
      target_peak_rss_mb: 200,
    };
  } finally {
    await d?.kill();
    await sim.close();
    w.cleanup();
  }
}
