// Summarises a V8 .cpuprofile: self time aggregated by function name + script, and by script.
import { readFileSync } from 'node:fs';
import { ROOT } from './util.js';

function shortUrl(url) {
  if (!url) return '';
  let u = url.replace(/^file:\/\//, '');
  if (u.startsWith(ROOT)) u = u.slice(ROOT.length);
  u = u.replace(/^.*node_modules\//, 'node_modules/');
  return u;
}

/**
 * @returns {{ totalMs: number, busyMs: number, top: Array<{ fn: string, url: string, selfMs: number, pct: number, pctBusy: number }>, byScript: Array<{ url: string, selfMs: number, pctBusy: number }> }}
 */
export function summariseProfile(pathOrProfile, topN = 15, { untilUs } = {}) {
  const prof = typeof pathOrProfile === 'string' ? JSON.parse(readFileSync(pathOrProfile, 'utf8')) : pathOrProfile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const selfUs = new Map();
  // Sample times are CLOCK_MONOTONIC microseconds, the clock of process.hrtime in any process.
  let at = prof.startTime;
  for (let i = 0; i < prof.samples.length; i++) {
    const id = prof.samples[i];
    const dt = prof.timeDeltas[i] ?? 0;
    at += dt;
    if (untilUs !== undefined && at > untilUs) break;
    selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, dt));
  }
  const byFn = new Map();
  const byScript = new Map();
  const lineTicks = new Map();
  for (const n of prof.nodes) {
    if (untilUs !== undefined) break; // line ticks cannot be cut by time
    if (!n.positionTicks || !n.callFrame.url) continue;
    const cf = n.callFrame;
    const key = `${cf.functionName || '(anonymous)'}\u0000${shortUrl(cf.url)}\u0000${cf.lineNumber + 1}`;
    const m = lineTicks.get(key) ?? new Map();
    for (const t of n.positionTicks) m.set(t.line, (m.get(t.line) ?? 0) + t.ticks);
    lineTicks.set(key, m);
  }
  let total = 0;
  let idle = 0;
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  for (const [id, us] of selfUs) {
    let cf = byId.get(id).callFrame;
    let fn = cf.functionName || '(anonymous)';
    if (!cf.functionName && !cf.url && parent.has(id)) {
      // A native function (e.g. a better-sqlite3 statement or a C++ binding): name it after its caller.
      cf = byId.get(parent.get(id)).callFrame;
      fn = `(native) in ${cf.functionName || '(anonymous)'}`;
    }
    const url = shortUrl(cf.url);
    total += us;
    if (fn === '(idle)') idle += us;
    const key = `${fn}\u0000${url}\u0000${url ? cf.lineNumber + 1 : ''}`;
    byFn.set(key, (byFn.get(key) ?? 0) + us);
    const script = url || fn;
    byScript.set(script, (byScript.get(script) ?? 0) + us);
  }
  const busy = total - idle;
  const top = [...byFn]
    .sort((a, b) => b[1] - a[1])
    .slice(0, topN)
    .map(([k, us]) => {
      const [fn, url, line] = k.split('\u0000');
      const row = { fn, url: url ? `${url}:${line}` : '', selfMs: Math.round(us / 1000), pct: round1((100 * us) / total), pctBusy: fn === '(idle)' ? null : round1((100 * us) / busy) };
      const ticks = lineTicks.get(k);
      if (ticks && url.startsWith('dist/')) row.hotLines = hotLines(url, ticks);
      return row;
    });
  const scripts = [...byScript]
    .filter(([k]) => k !== '(idle)')
    .sort((a, b) => b[1] - a[1])
    .slice(0, topN)
    .map(([url, us]) => ({ url, selfMs: Math.round(us / 1000), pctBusy: round1((100 * us) / busy) }));
  return { totalMs: Math.round(total / 1000), busyMs: Math.round(busy / 1000), top, byScript: scripts };
}

/** The busiest source lines of a function (ticks are samples; native calls count for the line that made them). */
function hotLines(url, ticks) {
  let lines = [];
  try {
    lines = readFileSync(`${ROOT}${url}`, 'utf8').split('\n');
  } catch {
    /* the file moved */
  }
  const sum = [...ticks.values()].reduce((a, b) => a + b, 0);
  return [...ticks]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([line, n]) => ({ line, share: round1((100 * n) / sum), code: (lines[line - 1] ?? '').trim().slice(0, 100) }));
}

const round1 = (x) => Math.round(x * 10) / 10;
