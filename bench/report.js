// Prints the Markdown tables of docs/performance.md from bench/results/latest-quick.json and
// latest-full.json (whichever exist): `node bench/report.js`.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './lib/util.js';

const load = (mode) => {
  const p = join(ROOT, 'bench/results', `latest-${mode}.json`);
  return existsSync(p) ? JSON.parse(readFileSync(p, 'utf8')) : undefined;
};
const runs = { quick: load('quick'), full: load('full') };
const modes = Object.keys(runs).filter((m) => runs[m]);
const n = (x, d = 0) => (Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }) : '—');
const get = (mode, f) => {
  try {
    return f(runs[mode].results);
  } catch {
    return undefined;
  }
};

const rows = [
  ['throughput', 'baseline: undici + JSON.parse (entries/s)', (r) => n(r.throughput.baseline_entries_per_sec), ''],
  ['throughput', 'daemon end to end, from its first request (entries/s)', (r) => n(r.throughput.daemon_entries_per_sec), ''],
  ['throughput', 'daemon from process start (entries/s)', (r) => n(r.throughput.daemon_entries_per_sec_from_process_start), ''],
  ['throughput', '**throughput_ratio** daemon ÷ baseline', (r) => n(r.throughput.throughput_ratio, 3), ''],
  ['throughput', 'daemon CPU during the run (% of one core)', (r) => n(r.throughput.daemon_cpu_percent_of_one_core), ''],
  ['throughput', 'daemon CPU by thread (µs per entry): main / V8 helpers / libuv pool', (r) => ['main', 'v8_helpers', 'libuv_pool'].map((k) => n(r.throughput.daemon_cpu_by_thread_us_per_entry[k], 2)).join(' / '), ''],
  ['throughput', 'daemon main thread waiting for a CPU (% of its wall time)', (r) => n(r.throughput.daemon_main_thread_runq_wait_percent, 1), ''],
  ['throughput', 'floor (µs per entry): prepare / commit path / bare SQLite FULL / file + fdatasync', (r) => ['prepare', 'commit_path', 'sqlite_full', 'file_fdatasync'].map((k) => n(r.throughput.floor[`${k}_us_per_entry`], 2)).join(' / '), ''],
  ['throughput', 'main-thread budget at half the baseline (µs per entry)', (r) => n(r.throughput.floor.budget_at_half_baseline_us_per_entry, 2), ''],
  ['amplification', 'served ÷ delivered, `sliding`', (r) => n(r.amplification.sliding.amplification, 2), ''],
  ['amplification', 'served ÷ delivered, `sparse`', (r) => n(r.amplification.sparse.amplification, 2), ''],
  ['amplification', 'sliding ÷ sparse', (r) => n(r.amplification.ratio_sliding_to_sparse, 1), ''],
  ['amplification', 'late entries missed, sliding / sparse (of late)', (r) => `${r.amplification.sliding.late_missed} / ${r.amplification.sparse.late_missed} (of ${r.amplification.sparse.late_entries})`, '0'],
  ['idle', 'CPU, % of one core', (r) => n(r.idle.cpu_percent, 1), '≤ 3'],
  ['idle', 'RSS (MB)', (r) => n(r.idle.rss_mb), '≤ 120'],
  ['idle', 'RSS after one forced full GC (MB)', (r) => n(r.idle.memory_usage_after_full_gc_mb.rss_proc), ''],
  ['idle', 'logs requests per second', (r) => n(r.idle.requests_per_sec), ''],
  ['backlog', 'entries held in the journal', (r) => n(r.backlog.journal_entries), ''],
  ['backlog', 'peak RSS (MB)', (r) => n(r.backlog.peak_rss_mb), '≤ 200'],
  ['backlog', 'RSS after one forced full GC (MB)', (r) => n(r.backlog.memory_usage_after_full_gc_mb.rss), ''],
  ['backlog', 'disk bytes per journal entry (state + WAL)', (r) => n(r.backlog.disk_bytes_per_entry), ''],
  ['restart', 'start → first logs request, 1 M journal (ms)', (r) => n(r.restart.first_request_ms), '≤ 1 000'],
  ['restart', 'start → first logs request, empty journal (ms)', (r) => n(r.restart.first_request_empty_journal_ms), ''],
  ['restart', '`node -e 0` / `mls --version` (ms)', (r) => `${r.restart.node_noop_ms} / ${r.restart.mls_version_ms}`, ''],
  ['lag', 'interval', (r) => `${r.lag.interval_ms / 1000} s`, ''],
  ['lag', 'visible → line in file, median (ms)', (r) => n(r.lag.median_ms), 'interval + 1 s'],
  ['lag', 'visible → line in file, p95 (ms)', (r) => n(r.lag.p95_ms), ''],
];

const head = ['benchmark', 'figure', ...modes.map((m) => `${m} run`), 'target'];
console.log(`| ${head.join(' | ')} |`);
console.log(`|${head.map((_, i) => (i >= 2 ? '---:' : '---')).join('|')}|`);
for (const [bench, figure, f, target] of rows) {
  console.log(`| ${bench} | ${figure} | ${modes.map((m) => get(m, f) ?? '—').join(' | ')} | ${target} |`);
}
console.log('');
for (const m of modes) {
  const r = runs[m];
  console.log(`- ${m} run: ${r.started_at}, ${r.wall_seconds} s, commit ${r.code?.commit?.slice(0, 7) ?? '?'}${r.code?.src_modified ? ' + uncommitted changes in src/' : ''}, load average at start ${r.machine.loadavg_at_start}`);
}

for (const m of modes) {
  const p = get(m, (r) => r.throughput.profile);
  if (!p) continue;
  console.log(`\nTop 15 self time, profiled throughput run (${m}; ${p.busyMs} ms busy of ${p.totalMs} ms sampled):\n`);
  console.log('| # | self ms | % of busy | function | where | busiest line |');
  console.log('|---:|---:|---:|---|---|---|');
  p.top.forEach((t, i) => {
    const hl = t.hotLines?.[0] ? `\`${t.hotLines[0].code.replace(/\|/g, '\\|').slice(0, 72)}\` (${t.hotLines[0].share} %)` : '';
    console.log(`| ${i + 1} | ${t.selfMs} | ${t.pctBusy ?? '—'} | \`${t.fn}\` | ${t.url ? `\`${t.url}\`` : ''} | ${hl} |`);
  });
}
