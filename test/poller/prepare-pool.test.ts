// The worker thread prepares exactly what the inline path prepares: the same times, hashes,
// bad-time counts and journal bytes, for all entries and for any kept subset, on generated
// bodies (unicode, escapes, lone surrogates, unparseable times). It starts only for large
// pages, stops when idle, and when it cannot start or fails, pages are prepared inline.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { scanLogsBody, type ScannedLogs } from '../../src/api/logs-scan.js';
import { PreparePool } from '../../src/poller/prepare-pool.js';
import { prepareScanned } from '../../src/poller/prepare.js';
import { validEntry } from '../api/wire-arbitraries.js';

// The compiled worker (the global setup builds dist/ before the suites).
const WORKER = new URL('../../dist/poller/prepare-worker.js', import.meta.url);
const FROM_MS = 1_714_564_800_000;
const MODEL = 'model-é"1';

const pools: PreparePool[] = [];
function pool(options: ConstructorParameters<typeof PreparePool>[0] = {}): PreparePool {
  const p = new PreparePool({ workerUrl: WORKER, minEntries: 1, ...options });
  pools.push(p);
  return p;
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

function scanned(entries: Array<{ time: string; log: string; stream: string }>): ScannedLogs {
  const scan = scanLogsBody(Buffer.from(JSON.stringify({ status: 'success', details: entries, next_token: 'n' })));
  if (!scan) throw new Error('the scanner left the body to the parser');
  return scan;
}

function page(n: number, seed: number): ScannedLogs {
  const entries = [];
  for (let i = 0; i < n; i++) {
    const s = String(i % 60).padStart(2, '0');
    entries.push({ time: `2024-05-01T12:00:${s}.${String(seed + i).padStart(9, '0')}Z`, log: `line ${i} of page ${seed}: "ok" \\ é ${'x'.repeat(i % 50)}`, stream: i % 3 ? 'stdout' : 'stderr' });
  }
  return scanned(entries);
}

/** Everything a prepared page gives the journal, for comparison. */
async function outcome(p: Promise<ReturnType<typeof prepareScanned>> | ReturnType<typeof prepareScanned>, keep: (i: number) => boolean) {
  const { page: prepared, badTimes, badExample } = await p;
  const n = prepared.length;
  const all = Uint32Array.from({ length: n }, (_, i) => i);
  const some = all.filter(keep);
  return {
    times: [...prepared.timesNs],
    hashes: [...prepared.hashes],
    badTimes,
    badExample,
    all: prepared.render(MODEL, all, n).toString('latin1'),
    some: prepared.render(MODEL, some, some.length).toString('latin1'),
  };
}

describe('page preparation on a worker thread', () => {
  it('prepares generated pages exactly as the inline path does, for all entries and any kept subset', async () => {
    const p = pool();
    await fc.assert(
      fc.asyncProperty(fc.array(validEntry, { minLength: 1, maxLength: 40 }), fc.integer(), async (entries, mask) => {
        const scan = scanLogsBody(Buffer.from(JSON.stringify({ status: 'success', details: entries.map((e) => ({ time: e.time, log: e.log, stream: e.stream })) })));
        fc.pre(scan !== undefined);
        const keep = (i: number) => ((mask >>> i % 31) & 1) === 1;
        expect(await outcome(p.prepare(scan!, FROM_MS, MODEL), keep)).toEqual(await outcome(prepareScanned(scan!, FROM_MS), keep));
      }),
      { numRuns: 300, seed: Number(process.env.MLS_PROPERTY_SEED ?? 4242) },
    );
    expect(p.counts.worker).toBeGreaterThan(250);
    expect(p.counts.fallbacks).toBe(0);
  });

  it('keeps many pages in flight apart, each answered with its own', async () => {
    const p = pool();
    const scans = Array.from({ length: 40 }, (_, k) => page(300 + k, k * 1000));
    const results = await Promise.all(scans.map((s, k) => outcome(p.prepare(s, FROM_MS, MODEL), (i) => (i + k) % 3 !== 0)));
    const inline = await Promise.all(scans.map((s, k) => outcome(prepareScanned(s, FROM_MS), (i) => (i + k) % 3 !== 0)));
    expect(results).toEqual(inline);
    expect(p.counts.worker).toBe(40);
    // lines rendered for one model are never committed under another
    const { page: rendered } = await p.prepare(scans[0]!, FROM_MS, MODEL);
    expect(() => rendered.render('other-model', new Uint32Array([0]), 1)).toThrow(/rendered for model/);
  });

  it('prepares small pages inline and starts the worker only for large ones', async () => {
    const p = pool({ minEntries: 200 });
    await p.prepare(page(199, 1), FROM_MS, MODEL);
    expect([p.running, p.counts.inline, p.counts.worker]).toEqual([false, 1, 0]);
    await p.prepare(page(200, 2), FROM_MS, MODEL);
    expect([p.running, p.counts.inline, p.counts.worker]).toEqual([true, 1, 1]);
  });

  it('stops the worker after a quiet spell and starts it again for the next large page', async () => {
    const p = pool({ idleMs: 200 });
    await p.prepare(page(300, 1), FROM_MS, MODEL);
    expect(p.running).toBe(true);
    const until = Date.now() + 5_000;
    while (p.running && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(p.running).toBe(false);
    expect(await outcome(p.prepare(page(300, 2), FROM_MS, MODEL), () => true)).toEqual(await outcome(prepareScanned(page(300, 2), FROM_MS), () => true));
    expect([p.running, p.counts.worker]).toEqual([true, 2]);
  });

  describe('when the worker is missing or fails', () => {
    let dir: string;
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('prepares inline when the worker script does not exist (running from sources)', async () => {
      dir = mkdtempSync(join(tmpdir(), 'mls-prepare-'));
      const p = pool({ workerUrl: pathToFileURL(join(dir, 'absent.js')) });
      const scan = page(300, 1);
      expect(await outcome(p.prepare(scan, FROM_MS, MODEL), () => true)).toEqual(await outcome(prepareScanned(scan, FROM_MS), () => true));
      expect([p.running, p.counts.inline]).toEqual([false, 1]);
    });

    it('prepares inline what a crashed worker held, and keeps the worker off for a while', async () => {
      dir = mkdtempSync(join(tmpdir(), 'mls-prepare-'));
      const crashing = join(dir, 'crash.mjs');
      writeFileSync(crashing, "import { parentPort } from 'node:worker_threads';\nparentPort.on('message', () => { throw new Error('worker bug'); });\n");
      const warnings: unknown[] = [];
      const logger = { warn: (o: unknown, m: string) => warnings.push([o, m]), debug: () => {} } as unknown as NonNullable<ConstructorParameters<typeof PreparePool>[0]>['logger'];
      const p = pool({ workerUrl: pathToFileURL(crashing), logger });
      const scans = [page(300, 1), page(301, 2), page(302, 3)];
      const got = await Promise.all(scans.map((s) => outcome(p.prepare(s, FROM_MS, MODEL), () => true)));
      expect(got).toEqual(await Promise.all(scans.map((s) => outcome(prepareScanned(s, FROM_MS), () => true))));
      expect(p.counts.fallbacks).toBe(3);
      expect(warnings).toHaveLength(1);
      expect(p.running).toBe(false);
      await p.prepare(page(300, 4), FROM_MS, MODEL);
      expect([p.running, p.counts.inline]).toEqual([false, 1]);
    });

    it('prepares inline a page the worker answered with an error', async () => {
      dir = mkdtempSync(join(tmpdir(), 'mls-prepare-'));
      const refusing = join(dir, 'refuse.mjs');
      writeFileSync(refusing, "import { parentPort } from 'node:worker_threads';\nparentPort.on('message', (m) => parentPort.postMessage({ id: m.id, error: 'cannot' }));\n");
      const p = pool({ workerUrl: pathToFileURL(refusing) });
      const scan = page(300, 1);
      expect(await outcome(p.prepare(scan, FROM_MS, MODEL), () => true)).toEqual(await outcome(prepareScanned(scan, FROM_MS), () => true));
      expect([p.counts.fallbacks, p.running]).toEqual([1, true]);
    });

    it('close() hands pages still with the worker back inline', async () => {
      dir = mkdtempSync(join(tmpdir(), 'mls-prepare-'));
      const silent = join(dir, 'silent.mjs');
      writeFileSync(silent, "import { parentPort } from 'node:worker_threads';\nparentPort.on('message', () => {});\n");
      const p = pool({ workerUrl: pathToFileURL(silent) });
      const scan = page(300, 1);
      const pending = p.prepare(scan, FROM_MS, MODEL);
      await p.close();
      expect(await outcome(pending, () => true)).toEqual(await outcome(prepareScanned(scan, FROM_MS), () => true));
      expect(p.running).toBe(false);
    });
  });
});
