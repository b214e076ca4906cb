// A traceback whose first page was delivered into an open group when the daemon was killed:
// the group is reopened from the journal at the next start and closes with the rest of the
// traceback, one record, whatever the order in which the sinks and the pollers start.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateReader } from '../../src/journal/reader.js';
import { entryAt, page, startHostileService, type HostileService } from '../helpers/hostile-service.js';
import { readNdjsonTree, startMls, waitFor, writeConfig } from './harness.js';

const TOKEN = 'tok-processing-restart-31c';
let dir: string;
let service: HostileService;
let released = false;
const at = Date.now() - 5_000;
const FIRST = [
  entryAt(at, 'ERROR:app.handlers:request 9f2 failed', 'stderr'),
  entryAt(at + 1, 'Traceback (most recent call last):', 'stderr'),
  entryAt(at + 2, '  File "/app/server.py", line 88, in predict', 'stderr'),
  entryAt(at + 3, '    scores = model.score(batch)', 'stderr'),
];
const REST = [
  entryAt(at + 4, '  File "/app/model.py", line 41, in score', 'stderr'),
  entryAt(at + 5, '    raise RuntimeError("boom")', 'stderr'),
  entryAt(at + 6, 'RuntimeError: boom', 'stderr'),
  entryAt(at + 7, 'INFO:     127.0.0.1:5000 - "POST /predict HTTP/1.1" 500 Internal Server Error', 'stderr'),
];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-processing-restart-'));
  service = await startHostileService((call) => {
    // The first window: its first page, then its second one only once released.
    if (call.nextToken === undefined && call.fromMs <= at && call.toMs > at) return { body: page(FIRST, 'second-page') };
    if (call.nextToken === 'second-page') return released ? { body: page(REST, null) } : { hang: true };
    return { body: page([]) };
  });
});
afterAll(async () => {
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('an open group across a crash', () => {
  it('is reopened from the journal and closes whole with the rest of its lines', { timeout: 60_000 }, async () => {
    const statePath = join(dir, 'state.db');
    const out = join(dir, 'out');
    const config = writeConfig(dir, {
      api: { base_url: service.url, token: TOKEN },
      state: { path: statePath },
      poll: { interval: '500ms', settle: '100ms', start_at: '-10s', rate_limit: 'none' },
      models: [{ id: 'm1' }],
      sinks: [{ name: 'files', type: 'file', path: join(out, '{model_id}.ndjson'), batch: { max_delay: '20ms' } }],
      log: { level: 'warn' },
    });
    const first = startMls(['run', '--config', config]);
    // The first page's lines are past the cursor, held in the open group.
    let openError: unknown;
    await waitFor(
      () => {
        if (!existsSync(statePath)) return false;
        let r: StateReader;
        try {
          r = StateReader.open(statePath);
        } catch (err) {
          // The daemon has created the file but not yet its tables.
          openError = err;
          return false;
        }
        try {
          const sink = r.listSinks()[0];
          return sink !== undefined && sink.cursor === 4 && sink.holdSeq === 1;
        } finally {
          r.close();
        }
      },
      20_000,
      'the first page acknowledged with its lines held',
      200,
      () => `the state file's last open error: ${String(openError)}`,
    );
    expect(readNdjsonTree(out)).toEqual([]);
    first.child.kill('SIGKILL');
    await first.exited;

    released = true;
    const second = startMls(['run', '--config', config]);
    try {
      await waitFor(() => readNdjsonTree(out).length >= 2, 20_000, 'the records');
      const records = readNdjsonTree(out) as Array<{ log: string; lines?: number; level?: string; time: string }>;
      expect(records.map((r) => [r.lines ?? 1, r.level])).toEqual([
        [7, 'error'],
        [1, 'info'],
      ]);
      expect(records[0]!.log).toBe([...FIRST, ...REST.slice(0, 3)].map((e) => e.log).join('\n'));
      expect(records[0]!.time).toBe(FIRST[0]!.time);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});
