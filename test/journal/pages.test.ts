//! Journal pages: NDJSON lines (UTF-8) with packed times, read back as lines, slices and entries.
import { describe, expect, it } from 'vitest';
import { JournalPage, packTimes, sliceBytes, sliceCount, sliceEntries, unpackTimes } from '../../src/journal/pages.js';
import { entryToNdjson } from '../../src/records/ndjson.js';
import type { SinkEntry } from '../../src/sinks/contract.js';

const entries = (first: number, logs: string[]): SinkEntry[] =>
  logs.map((log, i) => ({ seq: first + i, modelId: 'm"1', time: `2026-11-22T10:00:0${i}Z`, timeNs: 1795341600000000000n + BigInt(i) * 1_000_000_000n + 7n, stream: i % 2 ? 'stderr' : 'stdout', log, fetchedAtMs: 42 }));

function pageOf(first: number, logs: string[]): JournalPage {
  const es = entries(first, logs);
  const times = BigInt64Array.from(es.map((e) => e.timeNs));
  return new JournalPage(first, 'm"1', 42, Buffer.from(es.map(entryToNdjson).join('')), times);
}

describe('journal pages', () => {
  const logs = ['a', 'multi\nline', 'é 🦙 \ud800', '', 'last'];

  it('decodes its text back to the entries it was written from', () => {
    const page = pageOf(10, logs);
    expect(page.count).toBe(5);
    expect(page.lastSeq).toBe(14);
    expect(page.entries()).toEqual(entries(10, logs));
  });

  it('cuts whole lines out of its bytes, counting bytes not characters', () => {
    const page = pageOf(10, logs);
    const lines = entries(10, logs).map(entryToNdjson);
    expect(page.lines(0, 5)).toBe(page.bytes);
    expect(page.lines(1, 3).toString()).toBe(lines[1]! + lines[2]!);
    expect(page.lines(4, 5).toString()).toBe(lines[4]);
    expect(page.lines(2, 2).length).toBe(0);
    expect(page.size(2, 3)).toBe(Buffer.byteLength(lines[2]!));
    expect(page.size(2, 3)).toBeGreaterThan(lines[2]!.length);
    expect([...page.starts()]).toEqual(lines.reduce((acc, l) => [...acc, acc[acc.length - 1]! + Buffer.byteLength(l)], [0]));
  });

  it('slices count entries and bytes, and yield the entries in seq order', () => {
    const a = pageOf(1, ['x', 'y', 'z']);
    const b = pageOf(4, ['u', 'v']);
    const slices = [
      { page: a, from: 1, to: 3 },
      { page: b, from: 0, to: 1 },
    ];
    expect(sliceCount(slices)).toBe(3);
    expect(sliceBytes(slices)).toBe(a.lines(1, 3).length + b.lines(0, 1).length);
    expect(sliceEntries(slices).map((e) => [e.seq, e.log])).toEqual([
      [2, 'y'],
      [3, 'z'],
      [4, 'u'],
    ]);
    // one whole page is handed out as the page's own (cached) array
    expect(sliceEntries([{ page: b, from: 0, to: 2 }])).toBe(b.entries());
  });

  it('packs times to 8 bytes each and unpacks them from an unaligned buffer', () => {
    const times = BigInt64Array.from([1n, -2n, 1795341600123456789n]);
    const packed = packTimes(times);
    expect(packed.byteLength).toBe(24);
    const unaligned = Buffer.alloc(25);
    packed.copy(unaligned, 1);
    expect([...unpackTimes(unaligned.subarray(1))]).toEqual([1n, -2n, 1795341600123456789n]);
  });

  it('builds the same page from already decoded entries', () => {
    const es = entries(7, logs);
    const page = JournalPage.fromEntries(7, 'm"1', 42, es);
    expect(page.bytes.equals(pageOf(7, logs).bytes)).toBe(true);
    expect([...page.timesNs]).toEqual(es.map((e) => e.timeNs));
    expect(page.entries()).toBe(es);
  });
});
