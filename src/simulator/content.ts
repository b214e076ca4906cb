//! Log lines of the simulated models: mostly short service output, with the variety a
//! real model produces (tracebacks, unicode, empty lines, very long lines, characters that
//! need JSON escaping). A line is a pure function of its 32-bit content seed, so entries
//! are rendered only when first served.
import { mulberry32 } from './prng.js';

/** Probabilities of the unusual kinds of line. */
export interface ContentRates {
  multilineRate: number;
  unicodeRate: number;
  emptyRate: number;
  longRate: number;
}

const ROUTES = ['/predict', '/v1/generate', '/healthz', '/embed', '/classify'];
const WORKERS = 8;
const UNICODE = [
  'modèle chargé en 2,3 s — température 0.7',
  '推理完成 ✓ tokens=128',
  'Ответ готов: 42 токена',
  'emoji check 🚀🔥 ok',
  'λ=0.001 ∑loss=3.14 ∆t=5ms',
  'zero\u200bwidth and tab\tinside',
];
const ERRORS = ['CUDA out of memory', 'upstream timeout after 30s', 'invalid input shape (1, 3, 224)', 'connection reset by peer'];

function pick<T>(arr: readonly T[], u: number): T {
  return arr[Math.floor(u * arr.length)]!;
}

/** Renders the line and stream of a content seed under the given rates. */
export function renderContent(seed: number, rates: ContentRates): { log: string; stream: string } {
  const r = mulberry32(seed);
  const kind = r.next();
  let acc = rates.emptyRate;
  if (kind < acc) return { log: '', stream: r.next() < 0.5 ? 'stdout' : 'stderr' };
  acc += rates.multilineRate;
  if (kind < acc) {
    const err = pick(ERRORS, r.next());
    const line = r.int(10, 400);
    return {
      log: `Traceback (most recent call last):\n  File "/app/server.py", line ${line}, in handle\n    out = model(batch)\n  File "/app/model.py", line ${r.int(1, 99)}, in forward\nRuntimeError: ${err}`,
      stream: 'stderr',
    };
  }
  acc += rates.unicodeRate;
  if (kind < acc) return { log: `${pick(UNICODE, r.next())} #${r.int(0, 9999)}`, stream: 'stdout' };
  acc += rates.longRate;
  if (kind < acc) {
    const head = `DEBUG payload dump id=${r.nextU32().toString(16)} data=`;
    const chunk = `{"k":"v${r.int(0, 9)}","n":${r.int(0, 999)}},`;
    return { log: head + chunk.repeat(Math.ceil((9 * 1024 - head.length) / chunk.length)), stream: 'stdout' };
  }
  const t = r.next();
  const worker = r.int(0, WORKERS - 1);
  if (t < 0.55) {
    return { log: `INFO [worker-${worker}] POST ${pick(ROUTES, r.next())} 200 in ${(r.next() * 250).toFixed(1)}ms`, stream: 'stdout' };
  }
  if (t < 0.75) return { log: `DEBUG batch ${r.int(1, 99_999)} size=${r.int(1, 64)} queue=${r.int(0, 32)}`, stream: 'stdout' };
  if (t < 0.85) return { log: `WARNING: GPU memory at ${r.int(70, 99)}% on device ${r.int(0, 3)}`, stream: 'stderr' };
  if (t < 0.93) return { log: `ERROR [worker-${worker}] ${pick(ERRORS, r.next())}`, stream: 'stderr' };
  return { log: `request body={"prompt":"say \\"hi\\"","path":"C:\\\\models\\\\v${r.int(1, 9)}"}\ttook=${r.int(1, 900)}ms`, stream: 'stdout' };
}
