//! Log lines of the simulated models: mostly short service output, with the variety a
//! real model produces (tracebacks, unicode, empty lines, very long lines, characters that
//! need JSON escaping). A line is a pure function of its 32-bit content seed, so entries
//! are rendered only when first served.
import { int, next, nextU32, pick, reseed } from './content-rng.js';

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

/** Renders the line and stream of a content seed under the given rates. */
export function renderContent(seed: number, rates: ContentRates): { log: string; stream: string } {
  reseed(seed);
  const kind = next();
  let acc = rates.emptyRate;
  if (kind < acc) return { log: '', stream: next() < 0.5 ? 'stdout' : 'stderr' };
  acc += rates.multilineRate;
  if (kind < acc) {
    const err = pick(ERRORS);
    const line = int(10, 400);
    return {
      log: `Traceback (most recent call last):\n  File "/app/server.py", line ${line}, in handle\n    out = model(batch)\n  File "/app/model.py", line ${int(1, 99)}, in forward\nRuntimeError: ${err}`,
      stream: 'stderr',
    };
  }
  acc += rates.unicodeRate;
  if (kind < acc) return { log: `${pick(UNICODE)} #${int(0, 9999)}`, stream: 'stdout' };
  acc += rates.longRate;
  if (kind < acc) {
    const head = `DEBUG payload dump id=${nextU32().toString(16)} data=`;
    const chunk = `{"k":"v${int(0, 9)}","n":${int(0, 999)}},`;
    return { log: head + chunk.repeat(Math.ceil((9 * 1024 - head.length) / chunk.length)), stream: 'stdout' };
  }
  const t = next();
  const worker = int(0, WORKERS - 1);
  if (t < 0.55) {
    return { log: `INFO [worker-${worker}] POST ${pick(ROUTES)} 200 in ${int(0, 249)}.${int(0, 9)}ms`, stream: 'stdout' };
  }
  if (t < 0.75) return { log: `DEBUG batch ${int(1, 99_999)} size=${int(1, 64)} queue=${int(0, 32)}`, stream: 'stdout' };
  if (t < 0.85) return { log: `WARNING: GPU memory at ${int(70, 99)}% on device ${int(0, 3)}`, stream: 'stderr' };
  if (t < 0.93) return { log: `ERROR [worker-${worker}] ${pick(ERRORS)}`, stream: 'stderr' };
  return { log: `request body={"prompt":"say \\"hi\\"","path":"C:\\\\models\\\\v${int(1, 9)}"}\ttook=${int(1, 900)}ms`, stream: 'stdout' };
}

/** The kinds of {@link hostileLine}, in the order a line's seed picks them. */
export const HOSTILE_KINDS = ['deep JSON', '6 MB token', 'catastrophic for backtracking', 'lone surrogate', 'JSON a sink cannot encode'] as const;

/** A 32-bit hash of a seed, independent of the draws the content makes from it. */
function mix(seed: number, salt: number): number {
  let h = Math.imul((seed ^ salt) >>> 0, 0x9e3779b1);
  h ^= h >>> 15;
  h = Math.imul(h, 0x85ebca77);
  return (h ^ (h >>> 13)) >>> 0;
}

/**
 * With probability `rate` (a pure function of the content seed), a line that a careless
 * shipper fails on, in place of the seed's own: a JSON object nested 10,000 deep, a 6 MB
 * token-like run, a line that makes backtracking patterns such as `(a+)+$` run for hours, a
 * lone surrogate, a JSON line whose message holds a lone surrogate and whose number is
 * infinite; else undefined.
 */
export function hostileLine(seed: number, rate: number): string | undefined {
  if (mix(seed, 0x5eed) / 4_294_967_296 >= rate) return undefined;
  switch (mix(seed, 0xbad) % HOSTILE_KINDS.length) {
    case 0:
      return '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
    case 1:
      return 'token sk-' + 'Ab3Xy9Qz'.repeat(786_432);
    case 2:
      return 'a'.repeat(48) + '!';
    case 3:
      return 'emoji cut in half: \ud83d';
    default:
      return '{"event": "half an emoji \ud83d", "ratio": 1e400, "level": "warning"}';
  }
}
