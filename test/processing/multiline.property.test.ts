//! Properties of multiline grouping over random mixes of realistic lines on two streams, fed in
//! pages with advance() calls in between: nothing lost or duplicated, the cursor pin, and what
//! stays the same wherever the pages and the watermarks fall.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MultilineGrouper } from '../../src/processing/multiline.js';
import type { GroupedRecord } from '../../src/processing/grouped-record.js';
import type { ProcessLine } from '../../src/processing/types.js';
import { CORPUS } from './multiline-corpus.js';

const T0 = 1_772_366_400_000_000_000n;
const MS = 1_000_000n;
const MAX_GAP_MS = 2000;

const BLOCKS: string[][] = [
  ...CORPUS.map((c) => c.lines),
  ['INFO:app:loaded model llama-3-8b in 41.2 s'],
  ['INFO:     10.0.3.7:51544 - "POST /v1/generate HTTP/1.1" 200 OK'],
  ['2026-03-01 12:00:00,140 - app.generate - INFO - 128 tokens in 2.1 s'],
  ['ERROR:app.handlers:request 7f3a failed'],
  ['2026-03-01 12:00:00,123 - app - ERROR - generation failed'],
  [''],
  ['    indented text that starts nothing'],
];

interface Scenario {
  lines: ProcessLine[];
  /** After which line index (exclusive end of a page) an advance comes, and its offset in ms from the next line's time. */
  cuts: Array<{ after: number; offsetMs: number }>;
}

function scenario(maxOffsetMs: number): fc.Arbitrary<Scenario> {
  return fc
    .record({
      blocks: fc.array(fc.record({ lines: fc.constantFrom(...BLOCKS), stream: fc.constantFrom('stdout', 'stderr') }), { maxLength: 12 }),
      picks: fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }),
      stepsMs: fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3000 })), { minLength: 1, maxLength: 40 }),
      seqKeys: fc.array(fc.nat(999), { minLength: 1, maxLength: 40 }),
      cuts: fc.array(fc.record({ after: fc.nat(), offsetMs: fc.integer({ min: -5000, max: maxOffsetMs }) }), { maxLength: 8 }),
    })
    .map(({ blocks, picks, stepsMs, seqKeys, cuts }) => {
      const queues = new Map<string, string[]>([['stdout', []], ['stderr', []]]);
      for (const b of blocks) queues.get(b.stream)!.push(...b.lines);
      const lines: ProcessLine[] = [];
      let ms = 0;
      for (let i = 0; queues.get('stdout')!.length + queues.get('stderr')!.length > 0; i++) {
        let stream = picks[i % picks.length] ? 'stdout' : 'stderr';
        if (queues.get(stream)!.length === 0) stream = stream === 'stdout' ? 'stderr' : 'stdout';
        ms += stepsMs[i % stepsMs.length]!;
        const timeNs = T0 + BigInt(ms) * MS;
        // Seqs unique but not in time order, as after pages fetched out of order.
        lines.push({ seq: seqKeys[i % seqKeys.length]! * 10_000 + i, timeNs, time: String(timeNs), stream, log: queues.get(stream)!.shift()! });
      }
      return { lines, cuts: cuts.map((c) => ({ after: lines.length === 0 ? 0 : c.after % lines.length, offsetMs: c.offsetMs })).sort((a, b) => a.after - b.after) };
    });
}

/** Runs a scenario; calls `check` after every call with what has been returned so far. */
function run(s: Scenario, check?: (g: MultilineGrouper, pushed: number, returned: GroupedRecord[]) => void): GroupedRecord[][] {
  const g = new MultilineGrouper({ maxGapMs: MAX_GAP_MS });
  const calls: GroupedRecord[][] = [];
  const returned: GroupedRecord[] = [];
  const record = (out: GroupedRecord[], pushed: number): void => {
    calls.push(out);
    returned.push(...out);
    check?.(g, pushed, returned);
  };
  let cut = 0;
  s.lines.forEach((l, i) => {
    record(g.push(l), i + 1);
    for (; cut < s.cuts.length && s.cuts[cut]!.after === i; cut++) {
      const next = s.lines[i + 1]?.timeNs ?? l.timeNs;
      record(g.advance(next + BigInt(s.cuts[cut]!.offsetMs) * MS), i + 1);
    }
  });
  record(g.flush(), s.lines.length);
  return calls;
}

function perStream(lines: ProcessLine[]): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const l of lines) (out[l.stream] ??= []).push(l.seq);
  return out;
}

describe('MultilineGrouper properties', () => {
  it('returns every line in exactly one record, in order, whatever the watermarks', () => {
    fc.assert(
      fc.property(scenario(5000), (s) => {
        const records = run(s).flat();
        for (const r of records) {
          expect(r.lines.every((l) => l.stream === r.stream)).toBe(true);
          expect(r.log).toBe(r.lines.map((l) => l.log).join('\n'));
          expect([r.lineCount, r.firstSeq, r.lastSeq]).toEqual([r.lines.length, r.lines[0]!.seq, r.lines.at(-1)!.seq]);
        }
        expect(perStream(records.flatMap((r) => r.lines))).toEqual(perStream(s.lines));
      }),
    );
  });

  it('pins the cursor: openFirstSeq() is the lowest seq of the lines pushed and not yet returned', () => {
    fc.assert(
      fc.property(scenario(5000), (s) => {
        run(s, (g, pushed, returned) => {
          const out = new Set(returned.flatMap((r) => r.lines.map((l) => l.seq)));
          const held = s.lines.slice(0, pushed).filter((l) => !out.has(l.seq)).map((l) => l.seq);
          expect(g.openFirstSeq()).toBe(held.length === 0 ? undefined : Math.min(...held));
          expect(g.held().lines).toBe(held.length);
        });
      }),
    );
  });

  it('gives the same records for the same calls', () => {
    fc.assert(
      fc.property(scenario(5000), (s) => {
        expect(run(s)).toEqual(run(s));
      }),
    );
  });

  it('groups the same wherever pages end, when no watermark passes a line still to come', () => {
    const shape = (records: GroupedRecord[]) =>
      records
        .map((r) => ({ seqs: r.lines.map((l) => l.seq), kind: r.kind, closedBy: r.closedBy === 'flush' ? 'gap' : r.closedBy }))
        .sort((a, b) => a.seqs[0]! - b.seqs[0]!);
    fc.assert(
      fc.property(scenario(0), (s) => {
        const paged = run(s).flat();
        const whole = run({ lines: s.lines, cuts: [] }).flat();
        expect(shape(paged)).toEqual(shape(whole));
      }),
    );
  });
});
