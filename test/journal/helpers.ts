//! What the journal's tests share: entries prepared as the poller prepares them.
import { contentHash } from '../../src/dedupe/key.js';
import type { PreparedEntry } from '../../src/journal/store.js';
import { parseEntryTime } from '../../src/time/timestamp.js';

/** An entry with its time parsed and content hashed. */
export function prep(time: string, log: string, stream = 'stdout'): PreparedEntry {
  const t = parseEntryTime(time);
  if (!t.ok) throw new Error(t.reason);
  return { entry: { time, log, stream }, timeNs: t.ns, hash: contentHash(stream, log) };
}

/** 2026-11-22T10:00:00Z, the time the tests' windows start. */
export const T = Date.UTC(2026, 10, 22, 10, 0, 0);

/** The page test/fixtures/state/state-v3.db holds: twins, escapes, non-ASCII, a `\u` escape, a bad time. */
export const FIXTURE_PAGE = [
  { time: '2026-11-22T10:00:01.100000000Z', log: 'INFO [worker-1] POST /predict 200 in 12.5ms', stream: 'stdout' },
  { time: '2026-11-22T10:00:01.100000000Z', log: 'INFO [worker-1] POST /predict 200 in 12.5ms', stream: 'stdout' },
  { time: '2026-11-22T10:00:01.250000001Z', log: 'request body={"prompt":"say \\"hi\\""}\ttook 3ms\n', stream: 'stdout' },
  { time: '2026-11-22T10:00:01.5Z', log: 'naïve café ✓ 模型', stream: 'stderr' },
  { time: '2026-11-22T10:00:01.75Z', log: 'bell \u0001 and slash / end', stream: 'stderr' },
  { time: 'yesterday at noon', log: 'a line whose time does not parse', stream: 'stdout' },
  { time: '2026-11-22T10:00:02.000000500Z', log: 'WARN queue depth 31 above 30', stream: 'stdout' },
  { time: '2026-11-22T10:00:02.9Z', log: 'short', stream: 'stdout' },
];
