// The processor never loses or duplicates a line, whatever the page boundaries, the order of
// the lines within and across pages (late lines included), and the checkpoint calls between
// pages: every line's text is in exactly one record, once.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ModelProcessor } from '../../src/processing/pipeline.js';
import type { ProcessLine } from '../../src/processing/types.js';
import { runs } from '../helpers/long.js';

const TEXTS = [
  'ERROR:app:request failed',
  'Traceback (most recent call last):',
  '  File "/app/server.py", line 88, in predict',
  '    out = model(batch)',
  '          ^^^^^^^^^^^^',
  'RuntimeError: CUDA out of memory',
  '',
  'The above exception was the direct cause of the following exception:',
  'INFO:     127.0.0.1:5000 - "POST /predict HTTP/1.1" 200 OK',
  'WARNING:root:slow batch',
  '{"event": "done", "level": "info"}',
  'plain print output',
];

const lineArb = fc.record({ text: fc.constantFrom(...TEXTS), stream: fc.constantFrom('stdout', 'stderr'), dtUs: fc.integer({ min: -3_000_000, max: 3_000_000 }) });

describe('ModelProcessor', () => {
  it('puts every line in exactly one record, whatever the pages, their order and the checkpoint calls', () => {
    fc.assert(
      fc.property(
        fc.array(lineArb, { minLength: 1, maxLength: 80 }),
        fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 20 }),
        fc.array(fc.oneof(fc.constant('none'), fc.constant('advance'), fc.constant('flush')), { minLength: 1, maxLength: 20 }),
        fc.boolean(),
        (specs, sizes, calls, shuffle) => {
          let t = 1_000_000_000_000_000n;
          const lines: ProcessLine[] = specs.map((s, i) => {
            t += BigInt(s.dtUs) * 1000n;
            return { seq: i + 1, timeNs: t, time: `t${i}`, stream: s.stream, log: s.text };
          });
          const p = new ModelProcessor({ modelId: 'm' });
          const out: string[] = [];
          let at = 0;
          for (let k = 0; at < lines.length; k++) {
            const pageLines = lines.slice(at, at + sizes[k % sizes.length]!);
            at += pageLines.length;
            const pageOrder = shuffle ? [...pageLines].reverse() : pageLines;
            for (const r of p.push(pageOrder).records) out.push(...r.log.split('\n').map((l) => `${r.stream}|${l}`));
            const call = calls[k % calls.length];
            const last = pageLines[pageLines.length - 1]!.timeNs;
            const closed = call === 'advance' ? p.advance(last + 1_000_000_000n) : call === 'flush' ? p.flush() : { records: [] };
            for (const r of closed.records) out.push(...r.log.split('\n').map((l) => `${r.stream}|${l}`));
          }
          for (const r of p.flush().records) out.push(...r.log.split('\n').map((l) => `${r.stream}|${l}`));
          expect(out.sort()).toEqual(lines.map((l) => `${l.stream}|${l.log}`).sort());
          expect(p.openFirstSeq()).toBeUndefined();
        },
      ),
      { numRuns: runs(400) },
    );
  });
});
