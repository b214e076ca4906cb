// `mls demo`, the README's first command: runs the daemon against the embedded simulator and
// checks what it shipped against the simulator's ground truth.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readNdjsonTree, runMls } from './harness.js';

describe('mls demo', () => {
  it('ships the simulated models into NDJSON files with nothing missing or duplicated', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mls-demo-'));
    try {
      const out = join(dir, 'demo-out');
      const r = await runMls(['demo', '--duration', '8s', '--out', out, '--models', '2', '--rate', '30']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/checked against the simulator: \d+ settled entries; raw sink 0 missing, 0 duplicated; processed records 0 lines missing, 0 duplicated/);
      // the settled tracebacks the simulated servers printed went out as one record each (a
      // traceback that arrives late, in a re-read, across two pages is cut at the page: rare)
      const tracebacks = /tracebacks shipped as one record: (\d+) of (\d+) settled/.exec(r.stderr);
      expect(tracebacks, r.stderr).not.toBeNull();
      expect(Number(tracebacks![2])).toBeGreaterThan(20);
      expect(Number(tracebacks![1])).toBeGreaterThanOrEqual(0.95 * Number(tracebacks![2]));
      expect(r.stderr).toMatch(/levels read from the text: fatal \d+, error [1-9]\d*, warn [1-9]\d*, info [1-9]\d*/);
      // Entries (what the service returned) and records (what processing ships) are named apart everywhere.
      expect(r.stderr).toMatch(/^models 2 · entries from the service \d+ · delivered to every sink \d+ · max lag [\d.]+s · backlog \d+ entries$/m);
      const raw = /mls demo: (\d+) entries shipped as \1 lines in/.exec(r.stderr);
      const grouped = /mls demo: (\d+) entries shipped as (\d+) records in/.exec(r.stderr);
      expect(raw, r.stderr).not.toBeNull();
      expect(grouped, r.stderr).not.toBeNull();
      expect(Number(grouped![2])).toBeLessThan(Number(grouped![1]));
      const lines = readNdjsonTree(join(out, 'raw'));
      expect(lines.length).toBeGreaterThan(3_000);
      expect(new Set(lines.map((l) => l.model_id))).toEqual(new Set(['demo-model-1', 'demo-model-2']));
      const records = readNdjsonTree(join(out, 'records')) as Array<{ lines?: number; level?: string }>;
      expect(records.length).toBeLessThan(lines.length);
      expect(records.some((x) => (x.lines ?? 0) > 5 && x.level === 'error')).toBe(true);
      // a second run starts clean in the same folder
      const again = await runMls(['demo', '--duration', '3s', '--out', out, '--models', '1']);
      expect(again.code, again.stderr).toBe(0);
      // it refuses a folder that is not a previous demo's
      writeFileSync(join(dir, 'keep.txt'), 'x');
      const refused = await runMls(['demo', '--duration', '1s', '--out', dir]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('not a previous demo');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
