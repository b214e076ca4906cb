import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalFromNs, formatRequestTime } from '../../src/time/canonical.js';
import { msToNs, nsToMs, nsToMsCeil, parseEntryTime } from '../../src/time/timestamp.js';
import { runs } from '../helpers/long.js';

function ok(s: string): { ns: bigint; canonical: string } {
  const r = parseEntryTime(s);
  if (!r.ok) throw new Error(`expected ${s} to parse: ${r.reason}`);
  return r;
}

describe('parseEntryTime', () => {
  it.each([
    ['1970-01-01T00:00:00Z', 0n, '1970-01-01T00:00:00.000000000Z'],
    ['2024-05-01T12:34:56Z', 1714566896_000000000n, '2024-05-01T12:34:56.000000000Z'],
    ['2024-05-01T12:34:56.1Z', 1714566896_100000000n, '2024-05-01T12:34:56.100000000Z'],
    ['2024-05-01T12:34:56.123Z', 1714566896_123000000n, '2024-05-01T12:34:56.123000000Z'],
    ['2024-05-01T12:34:56.123456Z', 1714566896_123456000n, '2024-05-01T12:34:56.123456000Z'],
    ['2024-05-01T12:34:56.123456789Z', 1714566896_123456789n, '2024-05-01T12:34:56.123456789Z'],
    ['2024-05-01T12:34:56.000000001Z', 1714566896_000000001n, '2024-05-01T12:34:56.000000001Z'],
    ['2024-05-01T12:34:56.5+00:00', 1714566896_500000000n, '2024-05-01T12:34:56.500000000Z'],
    ['2024-05-01T14:34:56.5+02:00', 1714566896_500000000n, '2024-05-01T12:34:56.500000000Z'],
    ['2024-05-01T07:04:56.5-05:30', 1714566896_500000000n, '2024-05-01T12:34:56.500000000Z'],
    ['2024-01-01T00:30:00+01:00', 1704065400_000000000n, '2023-12-31T23:30:00.000000000Z'],
    ['2024-02-29T23:59:59.999999999Z', 1709251199_999999999n, '2024-02-29T23:59:59.999999999Z'],
    ['1969-12-31T23:59:59.999999999Z', -1n, '1969-12-31T23:59:59.999999999Z'],
    ['2000-02-29T00:00:00Z', 951782400_000000000n, '2000-02-29T00:00:00.000000000Z'],
    ['0000-01-01T00:00:00Z', -62167219200_000000000n, '0000-01-01T00:00:00.000000000Z'],
    ['9999-12-31T23:59:59.999999999Z', 253402300799_999999999n, '9999-12-31T23:59:59.999999999Z'],
  ])('parses %s exactly', (input, ns, canonical) => {
    const r = ok(input);
    expect(r.ns).toBe(ns);
    expect(r.canonical).toBe(canonical);
    expect(r.canonical).toHaveLength(30);
  });

  it.each([
    ['2024-05-01T12:34:56.1234567890Z', 'more than nine'],
    ['2024-13-01T00:00:00Z', 'month 13'],
    ['2024-00-01T00:00:00Z', 'month 0'],
    ['2023-02-29T00:00:00Z', 'day 29'],
    ['2024-02-30T00:00:00Z', 'day 30'],
    ['2024-04-31T00:00:00Z', 'day 31'],
    ['2024-05-00T00:00:00Z', 'day 0'],
    ['2024-05-01T24:00:00Z', 'hour 24'],
    ['2024-05-01T23:60:00Z', 'minute 60'],
    ['2024-05-01T23:59:60Z', 'second 60'],
    ['2024-05-01T12:34:56', "'Z'"],
    ['2024-05-01T12:34:56.Z', "no digit after '.'"],
    ['2024-05-01 12:34:56Z', "'T'"],
    ['2024-05-01t12:34:56Z', "'T'"],
    ['2024-05-01T12:34:56z', "'Z'"],
    ['2024-05-01T12:34:56ZX', 'after the zone'],
    ['2024-05-01T12:34:56+0200', 'offset'],
    ['2024-05-01T12:34:56+24:00', 'offset'],
    ['2024-05-01T12:34:56+02:60', 'offset'],
    ['24-05-01T12:34:56Z', 'YYYY-MM-DD'],
    ['2024-5-01T12:34:56Z', 'YYYY-MM-DD'],
    ['2024-05-01T1a:34:56Z', 'non-digit'],
    ['２０２４-05-01T12:34:56Z', 'non-digit'],
    ['', 'too short'],
    ['garbage', 'too short'],
    ['<html><body>2024-05-01T12:34:56Z</body></html>', "expected"],
    ['0000-01-01T00:30:00+01:00', 'outside'],
    ['9999-12-31T23:30:00-01:00', 'outside'],
  ])('refuses %s', (input, reason) => {
    const r = parseEntryTime(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain(reason);
  });

  it('never throws, whatever the input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (s) => {
        const r = parseEntryTime(s);
        expect(typeof r.ok).toBe('boolean');
      }),
      { numRuns: runs(2000) },
    );
    expect(parseEntryTime(42 as unknown as string).ok).toBe(false);
  });

  it('agrees with Date to the millisecond and keeps the extra digits exactly', () => {
    const year0 = -62_167_219_200_000;
    fc.assert(
      fc.property(
        fc.integer({ min: year0, max: Date.UTC(9999, 11, 31, 23, 59, 59, 999) }),
        fc.integer({ min: 0, max: 999_999 }),
        fc.integer({ min: 0, max: 9 }),
        (ms, subMs, digits) => {
          const iso = new Date(ms).toISOString();
          const nine = `${iso.slice(20, 23)}${String(subMs).padStart(6, '0')}`;
          const frac = nine.slice(0, digits);
          const input = `${iso.slice(0, 19)}${digits ? `.${frac}` : ''}Z`;
          const r = ok(input);
          const expected = BigInt(Math.floor(ms / 1000)) * 1_000_000_000n + BigInt(frac.padEnd(9, '0') || '0');
          expect(r.ns).toBe(expected);
          expect(r.canonical).toBe(canonicalFromNs(expected));
          expect(nsToMs(r.ns)).toBe(Date.parse(`${iso.slice(0, 19)}.${frac.padEnd(3, '0').slice(0, 3)}Z`));
        },
      ),
      { numRuns: runs(3000) },
    );
  });

  it('gives canonical strings that sort in time order, offsets included', () => {
    const arb = fc.record({
      sec: fc.integer({ min: 0, max: 4_000_000_000 }),
      frac: fc.integer({ min: 0, max: 999_999_999 }),
      digits: fc.integer({ min: 0, max: 9 }),
      offsetMin: fc.integer({ min: -23 * 60, max: 23 * 60 }),
    });
    const render = ({ sec, frac, digits, offsetMin }: { sec: number; frac: number; digits: number; offsetMin: number }): string => {
      const local = new Date(sec * 1000 + offsetMin * 60_000).toISOString().slice(0, 19);
      const f = String(frac).padStart(9, '0').slice(0, digits);
      const sign = offsetMin < 0 ? '-' : '+';
      const abs = Math.abs(offsetMin);
      const zone = offsetMin === 0 ? 'Z' : `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
      return `${local}${digits ? `.${f}` : ''}${zone}`;
    };
    fc.assert(
      fc.property(arb, arb, (a, b) => {
        const pa = ok(render(a));
        const pb = ok(render(b));
        expect(pa.ns).toBe(BigInt(a.sec) * 1_000_000_000n + BigInt(String(a.frac).padStart(9, '0').slice(0, a.digits).padEnd(9, '0')));
        expect(Math.sign(pa.canonical.localeCompare(pb.canonical, 'en'))).toBe(pa.ns < pb.ns ? -1 : pa.ns > pb.ns ? 1 : 0);
        expect(pa.canonical < pb.canonical).toBe(pa.ns < pb.ns);
        expect(ok(pa.canonical).ns).toBe(pa.ns);
      }),
      { numRuns: runs(3000) },
    );
  });
});

describe('canonicalFromNs', () => {
  it('pads to nine digits and handles times before 1970', () => {
    expect(canonicalFromNs(0n)).toBe('1970-01-01T00:00:00.000000000Z');
    expect(canonicalFromNs(-1n)).toBe('1969-12-31T23:59:59.999999999Z');
    expect(canonicalFromNs(1_000_000_001n)).toBe('1970-01-01T00:00:01.000000001Z');
  });
  it('refuses times the fixed width cannot hold', () => {
    expect(() => canonicalFromNs(253402300800_000000000n)).toThrow(RangeError);
    expect(() => canonicalFromNs(-62167219200_000000001n)).toThrow(RangeError);
  });
});

describe('formatRequestTime', () => {
  it.each([
    [0, '1970-01-01T00:00:00.000Z'],
    [1714566896123, '2024-05-01T12:34:56.123Z'],
    [1714566896000, '2024-05-01T12:34:56.000Z'],
    [1714566896123.9, '2024-05-01T12:34:56.123Z'],
  ])('formats %s with exactly three fractional digits', (ms, expected) => {
    expect(formatRequestTime(ms)).toBe(expected);
  });
  it('formats as Date#toISOString does, across days, years and the range ends', () => {
    const times = [-62167219200000, -62135596800001, -1, 951782399999, 951782400000, 1735689599999, 1735689600000, 253402300799999];
    for (let t = 1700000000000, i = 0; i < 2000; i++, t += 86_399_937 * ((i % 7) + 1) + i) times.push(t, t + 1, t - 1);
    for (const t of times) expect(formatRequestTime(t)).toBe(new Date(t).toISOString());
  });
  it('refuses values that are not times', () => {
    expect(() => formatRequestTime(Number.NaN)).toThrow(RangeError);
    expect(() => formatRequestTime(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(() => formatRequestTime(1e20)).toThrow(RangeError);
  });
});

describe('parsing state between calls', () => {
  it('gives the same reasons after a longer time was read (nothing of it is left behind)', () => {
    const reason = (s: string) => {
      const r = parseEntryTime(s);
      return r.ok ? 'ok' : r.reason;
    };
    const alone = ['2026-01-01T00:00:00', '2026-01-01T00:00:00.', '2026-01-01T00:00:00.12', '2026-02-30T00:00:00Z', '2026-01-01T00:00:00+01:0'].map(reason);
    for (const long of ['2026-01-01T00:00:00.123456789+01:00', '2026-01-01T00:00:00.123456789Z', '2026-02-28T00:00:00Z']) {
      const after = ['2026-01-01T00:00:00', '2026-01-01T00:00:00.', '2026-01-01T00:00:00.12', '2026-02-30T00:00:00Z', '2026-01-01T00:00:00+01:0'].map((s) => {
        parseEntryTime(long);
        return reason(s);
      });
      expect(after).toEqual(alone);
    }
    expect(alone).toEqual(["expected 'Z' or a zone offset", "no digit after '.'", "expected 'Z' or a zone offset", 'day 30 does not exist in 2026-02', 'expected a zone offset ±HH:MM']);
  });
});

describe('millisecond conversions', () => {
  it('rounds down, or up for the inclusive end, on both sides of the epoch', () => {
    expect(nsToMs(1_999_999n)).toBe(1);
    expect(nsToMs(2_000_000n)).toBe(2);
    expect(nsToMs(-1n)).toBe(-1);
    expect(nsToMs(-1_000_000n)).toBe(-1);
    expect(nsToMsCeil(1_000_001n)).toBe(2);
    expect(nsToMsCeil(1_000_000n)).toBe(1);
    expect(nsToMsCeil(-1n)).toBe(0);
    expect(msToNs(1714566896123)).toBe(1714566896_123_000_000n);
    expect(msToNs(1.7)).toBe(1_000_000n);
  });
});
