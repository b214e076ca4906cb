import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeFrontiers, encodeFrontiers } from '../../src/poller/plan-state.js';

describe('plan state encoding', () => {
  it('writes what JSON.stringify writes for the same frontiers', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 2 ** 31 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.oneof(fc.integer({ min: -(2 ** 45), max: 2 ** 45 }), fc.double({ noNaN: true, noDefaultInfinity: true })), { minLength: 6, maxLength: 6 }),
        (ages, values) => {
          const slotList = [...ages].sort((a, b) => a - b).map((age) => ({ key: String(age), ageMs: age, chunkMs: 1 }));
          const frontiers = slotList.map((_, i) => values[i]!);
          const f: Record<string, number> = {};
          slotList.forEach((slot, i) => (f[slot.key] = frontiers[i]!));
          expect(encodeFrontiers(slotList, frontiers)).toBe(JSON.stringify({ f }));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('reads back what it wrote, never before the start', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 2 ** 31 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.oneof(fc.integer({ min: -(2 ** 45), max: 2 ** 45 }), fc.double({ noNaN: true, noDefaultInfinity: true })), { minLength: 6, maxLength: 6 }),
        fc.integer({ min: -(2 ** 45), max: 2 ** 45 }),
        (ages, values, startMs) => {
          const slotList = [...ages].sort((a, b) => a - b).map((age) => ({ key: String(age), ageMs: age, chunkMs: 1 }));
          const frontiers = slotList.map((_, i) => values[i]!);
          expect(decodeFrontiers(encodeFrontiers(slotList, frontiers), slotList, startMs)).toEqual(frontiers.map((v) => Math.max(v, startMs) + 0)); // JSON writes -0 as 0
        },
      ),
      { numRuns: 500 },
    );
  });

  it('reads any other text as JSON.parse does', () => {
    const slotList = [30_000, 300_000].map((age) => ({ key: String(age), ageMs: age, chunkMs: 1 }));
    const reference = (text: string, startMs: number): number[] => {
      let parsed: { f?: Record<string, unknown> } | undefined;
      try {
        parsed = JSON.parse(text) as typeof parsed;
      } catch {
        parsed = undefined;
      }
      return slotList.map((s) => {
        const v = parsed?.f?.[s.key];
        return typeof v === 'number' && Number.isFinite(v) ? Math.max(v, startMs) : startMs;
      });
    };
    const texts = [
      '{"f":{"30000":5,"300000":7}}',
      '{"f":{"300000":7,"30000":5}}',
      '{"f":{"30000":5}}',
      '{"f":{}}',
      '{"f":{"30000":5,"30000":9}}',
      '{"f":{"30000":5.25,"300000":-7e3,"60000":1}}',
      '{"f":{"30000": 5,"300000":7}}',
      '{ "f": { "30000": 5 } }',
      '{"f":{"30000":5},"v":2}',
      '{"v":2,"f":{"30000":5}}',
      '{"f":{"30000":"5"}}',
      '{"f":{"30000":}}',
      '{"f":{"30000":0x10}}',
      '{"f":{"30000":Infinity}}',
      '{"f":{"30000":1e999}}',
      '{"f":{"30000":{"x":1},"300000":2}}',
      '{"f":{"30000":[1,2],"300000":2}}',
      '{"f":{"3000":1,"300000":2}}',
      '{"f":{"a,b":1,"30000":2}}',
      '{"f":{"30000":1}',
      'null',
      '[]',
      'garbage',
      '',
    ];
    for (const text of texts) {
      for (const startMs of [-1e9, 0, 6, 1e9]) expect(decodeFrontiers(text, slotList, startMs), `${text} from ${startMs}`).toEqual(reference(text, startMs));
    }
  });
});
