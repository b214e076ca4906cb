// Follows the NDJSON files a file sink writes: each complete line with the time it was
// seen, and the epoch milliseconds of an entry's own time.
import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Epoch ms of an entry time (Z form, 0–9 fractional digits), truncated to the millisecond. */
export function entryMs(t) {
  const dot = t.indexOf('.', 19);
  const frac = dot === 19 ? t.slice(20, t.length - 1) : '';
  return Date.parse(`${t.slice(0, 19)}.${frac.padEnd(3, '0').slice(0, 3)}Z`);
}

/** Follows every file of `dir`: each call reads what was added and calls `onLine(line, arrivalMs)` per complete line. */
export function follower(dir, onLine) {
  const offsets = new Map();
  const partial = new Map();
  const buf = Buffer.alloc(1 << 20);
  return function poll() {
    if (!existsSync(dir)) return;
    const now = Date.now();
    for (const f of readdirSync(dir)) {
      const p = join(dir, f);
      const size = statSync(p).size;
      let off = offsets.get(p) ?? 0;
      if (size <= off) continue;
      const fd = openSync(p, 'r');
      try {
        while (off < size) {
          const n = readSync(fd, buf, 0, Math.min(buf.length, size - off), off);
          if (n <= 0) break;
          off += n;
          const text = (partial.get(p) ?? '') + buf.toString('utf8', 0, n);
          const lines = text.split('\n');
          partial.set(p, lines.pop());
          for (const l of lines) if (l) onLine(l, now);
        }
      } finally {
        closeSync(fd);
      }
      offsets.set(p, off);
    }
  };
}
