// `mls demo`, the README's first command: runs the daemon against the embedded simulator and
// checks what it shipped against the simulator's ground truth.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readNdjsonTree, runMls, startMls, waitFor } from './harness.js';

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
      // The exception types each model's tracebacks show, the most frequent first.
      for (const model of ['demo-model-1', 'demo-model-2']) {
        const top = new RegExp(`^mls demo: exceptions of ${model}: ([\\w.]+ \\d+(?:, )?){1,3} \\(of (\\d+);`, 'm').exec(r.stderr);
        expect(top, r.stderr).not.toBeNull();
        const counts = [...top![0].matchAll(/ (\d+)(?=,| \()/g)].map((m) => Number(m[1]));
        expect(counts).toEqual([...counts].sort((a, b) => b - a));
      }
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

  it('writes the config it runs and prints the two commands that watch it, which work against it', { timeout: 90_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mls-demo-watch-'));
    try {
      const out = join(dir, 'demo-out');
      const demo = startMls(['demo', '--duration', '20s', '--out', out, '--models', '2']);
      let top = '';
      let tap = '';
      await waitFor(() => {
        top = /^mls demo: watch it from another terminal: (mls top -c \S+)$/m.exec(demo.stderr())?.[1] ?? '';
        tap = /^mls demo: see the records as the sinks get them: (mls tap -c \S+ --output text)$/m.exec(demo.stderr())?.[1] ?? '';
        return top !== '' && tap !== '';
      }, 30_000, 'the two commands', 100, demo.stderr);
      expect(top).toBe(`mls top -c ${join(out, 'mls.yaml')}`);
      const frame = await runMls([...top.split(' ').slice(1), '--once']);
      expect(frame.code, frame.stderr).toBe(0);
      expect(frame.stdout).toMatch(/│ demo-model-1 /);
      expect(frame.stdout).toMatch(/│ demo-records │ file /);
      const records = await runMls([...tap.split(' ').slice(1), '--limit', '5']);
      expect(records.code, records.stderr).toBe(0);
      expect(records.stdout.split('\n').filter((l) => /^demo-(records|raw) \S+Z demo-model-\d /.test(l)).length).toBeGreaterThanOrEqual(1);
      expect(records.stderr).toMatch(/5 records shown, 0 dropped/);
      const end = await demo.exited;
      expect(end.code, demo.stderr()).toBe(0);
      // its own lines, its progress and the daemon's log lines (readable ones: the faults it
      // injects) never share a line
      for (const line of demo.stderr().trimEnd().split('\n')) expect(line, line).toMatch(/^(mls demo: |models \d+ · |\[\d\d:\d\d:\d\d\.\d{3}\] [A-Z]+: |    )/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
