// What a user pattern costs per line on RE2 (re2js, what `mls` runs users' rules on) against
// the same pattern on V8's own engine (what it ran them on before): each rule the way
// processing applies it (a level rule tested then read, a drop rule tested, a redaction rule
// tested then replaced), over the simulator's plain lines. Time only, single thread; a
// pathological pattern is not timed here (V8 would not finish), see
// test/processing/pattern.test.ts.
//
//   node bench/patterns.js [--lines N]     (default 1,000,000; needs `npm run build`)
import { RE2JS } from 're2js';
import { renderContent } from '../dist/simulator/content.js';

const argAt = process.argv.indexOf('--lines');
const LINES = argAt > 0 ? Number(process.argv[argAt + 1]) : 1_000_000;
const RATES = { multilineRate: 0.02, unicodeRate: 0.02, emptyRate: 0.005, longRate: 0.002 };

/** The rules measured: [name, pattern, how processing applies it]. */
const RULES = [
  ['drop rule, a simple alternation', 'GET /(?:healthz|readyz|metrics)', 'test'],
  ['drop rule, a word anywhere', 'queue=\\d+', 'test'],
  ['level rule, anchored with a group', '^(?:WARNING|WARN):', 'exec'],
  ['level rule, unanchored with a named group', '\\b(?P<level>OOM|CUDA out of memory)\\b', 'exec'],
  ['redaction rule, a 16-digit number', '\\b\\d{16}\\b', 'replace'],
  ['redaction rule, key=value', '(token|password)=\\S+', 'replace'],
];

const lines = new Array(LINES);
let bytes = 0;
for (let i = 0; i < LINES; i++) {
  lines[i] = renderContent(i * 2654435761, RATES).log;
  bytes += lines[i].length;
}

function re2Rule(source, how) {
  const p = RE2JS.compile(source);
  if (how === 'test') return (l) => p.test(l);
  if (how === 'exec') return (l) => p.test(l) && p.exec(l);
  return (l) => (p.test(l) ? p.matcher(l).replaceAll('[REDACTED]') : l);
}

function v8Rule(source, how) {
  // The JavaScript spelling of the same pattern: named groups are written (?<name>…).
  const js = source.replaceAll('(?P<', '(?<');
  const one = new RegExp(js);
  const all = new RegExp(js, 'g');
  if (how === 'test') return (l) => one.test(l);
  if (how === 'exec') return (l) => one.exec(l);
  return (l) => l.replace(all, '[REDACTED]');
}

/** µs per line, the best of three passes over every line. */
function perLine(rule) {
  let best = Number.POSITIVE_INFINITY;
  let sink = 0;
  for (let pass = 0; pass < 3; pass++) {
    const t0 = performance.now();
    for (let i = 0; i < LINES; i++) if (rule(lines[i])) sink++;
    best = Math.min(best, performance.now() - t0);
  }
  if (sink < 0) throw new Error('unreachable');
  return (best * 1000) / LINES;
}

process.stdout.write(`${LINES.toLocaleString('en-US')} lines, ${(bytes / LINES).toFixed(0)} characters each on average\n\n`);
process.stdout.write(`${'rule'.padEnd(44)} ${'re2js µs/line'.padStart(14)} ${'V8 µs/line'.padStart(11)} ${'ratio'.padStart(6)}\n`);
for (const [name, source, how] of RULES) {
  const re2 = perLine(re2Rule(source, how));
  const v8 = perLine(v8Rule(source, how));
  process.stdout.write(`${name.padEnd(44)} ${re2.toFixed(3).padStart(14)} ${v8.toFixed(3).padStart(11)} ${(re2 / v8).toFixed(0).padStart(5)}×\n`);
}
