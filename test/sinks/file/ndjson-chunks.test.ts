//! Batches read from the journal bring their lines as NDJSON bytes. The file sink writes
//! them as they are; the files must be byte for byte those it writes from entries:
//! same paths (time codes of each entry's own time), same rotation points, same skipping
//! of lines a re-sent batch already wrote.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SinkBatch, SinkEntry } from '../../../src/sinks/contract.js';
import { createFileSink, type FileSinkOptions } from '../../../src/sinks/file/index.js';
import { entryToNdjson } from '../../../src/records/ndjson.js';
import { MemoryStore, options, readTree, withNdjson } from './helpers.js';
import { runs } from '../../helpers/long.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-chunks-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const plain = (entries: SinkEntry[]): SinkBatch => ({ id: 'b', firstSeq: entries[0]!.seq, lastSeq: entries[entries.length - 1]!.seq, entries });

const base = Date.parse('2026-11-22T22:59:58Z');
const entryArb = fc.record({
  model: fc.constantFrom('m1', 'm2', 'a/b'),
  offsetMs: fc.integer({ min: 0, max: 3 * 3_600_000 }),
  log: fc.string({ unit: 'binary', maxLength: 30 }),
});

/** Sends like the delivery loop; `resend` sends the batch again before committing (a commit that failed). */
async function run(opts: FileSinkOptions, batches: SinkEntry[][], resend: boolean[], build: (e: SinkEntry[]) => SinkBatch): Promise<void> {
  const store = new MemoryStore();
  const sink = await createFileSink(opts, store.ctx());
  const signal = new AbortController().signal;
  try {
    for (let i = 0; i < batches.length; i++) {
      let out = await sink.send(build(batches[i]!), signal);
      if (resend[i]) out = await sink.send(build(batches[i]!), signal);
      expect(out.status).toBe('ok');
      if (out.status === 'ok') store.ack(batches[i]![batches[i]!.length - 1]!.seq, out.state);
      store.clock += 1_000;
    }
  } finally {
    await sink.close();
  }
}

describe('file sink: batches with NDJSON lines', () => {
  it('writes the same files as from entries, for any templates, rotation sizes and re-sends', async () => {
    let ran = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(entryArb, { minLength: 1, maxLength: 60 }),
        fc.array(fc.integer({ min: 1, max: 25 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.boolean(), { maxLength: 8 }),
        fc.constantFrom('{model_id}.ndjson', '{model_id}/%Y-%m-%d/%H.ndjson', 'all-%M.ndjson'),
        fc.option(fc.integer({ min: 150, max: 2_000 })),
        async (rows, cuts, resend, template, maxBytes) => {
          const entries: SinkEntry[] = rows.map((r, i) => {
            const ms = base + r.offsetMs;
            return { seq: i + 1, modelId: r.model, time: new Date(ms).toISOString(), timeNs: BigInt(ms) * 1_000_000n + 123n, stream: 'stdout', log: r.log, fetchedAtMs: 0 };
          });
          const batches: SinkEntry[][] = [];
          for (let at = 0, k = 0; at < entries.length; k++) {
            const n = cuts[k % cuts.length]!;
            batches.push(entries.slice(at, at + n));
            at += n;
          }
          const trees: Record<string, string>[] = [];
          for (const [name, build] of [['entries', plain], ['ndjson', withNdjson]] as const) {
            rmSync(join(dir, name), { recursive: true, force: true });
            const opts = options(join(dir, name), { path: join(dir, name, template), ...(maxBytes ? { rotate: { max_bytes: maxBytes } } : {}) });
            await run(opts, batches, resend, build);
            trees.push(readTree(join(dir, name)));
          }
          expect(trees[1]).toEqual(trees[0]);
          // every entry is in the files exactly once
          const lines = Object.values(trees[0]!).join('').split('\n').filter((l) => l !== '');
          expect(lines.sort()).toEqual(entries.map((e) => entryToNdjson(e).slice(0, -1)).sort());
          ran++;
        },
      ),
      { numRuns: runs(60), seed: 5 },
    );
    expect(ran).toBe(runs(60));
  });
});
