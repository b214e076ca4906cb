// Generated entry timestamps: every date of the years 0000–9999 (and impossible ones),
// 0–20 fractional digits, `Z` and offsets (and broken ones). parseEntryTime never throws;
// 0–9 digits parse exactly (by parseEntryTime, and by the hot path's entryTimeNs) to the
// nanosecond (checked against a reference computed with
// BigInt and Date, not with the parser's own arithmetic); canonical strings sort like the
// nanoseconds; more than nine digits, impossible dates and broken zones are refused.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { entryTimeNs, parseEntryTime } from '../../src/time/timestamp.js';
import { runs } from '../helpers/long.js';

const RUNS = runs(10_000);

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

interface Parts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  digits: string;
  /** undefined: `Z`; otherwise the offset's sign, hours and minutes. */
  offset: { sign: '+' | '-'; h: number; m: number } | undefined;
}

const parts: fc.Arbitrary<Parts> = fc.record({
  year: fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(0, 1, 99, 100, 1582, 1600, 1900, 1969, 1970, 2000, 2024, 2100, 9999)),
  month: fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 1, max: 12 }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 99 }) }),
  day: fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 1, max: 28 }) }, { weight: 3, arbitrary: fc.integer({ min: 29, max: 31 }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 99 }) }),
  hour: fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 0, max: 23 }) }, { weight: 1, arbitrary: fc.integer({ min: 24, max: 99 }) }),
  minute: fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 0, max: 59 }) }, { weight: 1, arbitrary: fc.integer({ min: 60, max: 99 }) }),
  second: fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 0, max: 59 }) }, { weight: 1, arbitrary: fc.integer({ min: 60, max: 99 }) }),
  digits: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 0, max: 9 }) }, { weight: 1, arbitrary: fc.integer({ min: 10, max: 20 }) }).chain((n) => fc.array(fc.constantFrom(...'0123456789'), { minLength: n, maxLength: n }).map((a) => a.join(''))),
  offset: fc.option(
    fc.record({
      sign: fc.constantFrom('+' as const, '-' as const),
      h: fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 0, max: 23 }) }, { weight: 1, arbitrary: fc.integer({ min: 24, max: 99 }) }),
      m: fc.oneof({ weight: 9, arbitrary: fc.constantFrom(0, 15, 30, 45, 59) }, { weight: 1, arbitrary: fc.integer({ min: 60, max: 99 }) }),
    }),
    { nil: undefined, freq: 3 },
  ),
});

function format(p: Parts): string {
  const frac = p.digits === '' ? '' : `.${p.digits}`;
  const zone = p.offset === undefined ? 'Z' : `${p.offset.sign}${pad(p.offset.h)}:${pad(p.offset.m)}`;
  return `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}${frac}${zone}`;
}

const NS_PER_MS = 1_000_000n;
const NS_PER_S = 1_000_000_000n;

/** Epoch milliseconds of a UTC civil time through Date (setUTCFullYear takes years 0–99 literally). */
function civilMs(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  return d.getTime();
}
const RANGE_START_NS = BigInt(civilMs(0, 1, 1)) * NS_PER_MS;
const RANGE_END_NS = BigInt(civilMs(10_000, 1, 1)) * NS_PER_MS;

/** The reference reading: the nanoseconds and canonical form, or undefined when invalid. */
function reference(p: Parts): { ns: bigint; canonical: string } | undefined {
  if (p.month < 1 || p.month > 12 || p.day < 1) return undefined;
  const probe = new Date(0);
  probe.setUTCFullYear(p.year, p.month - 1, p.day);
  if (probe.getUTCMonth() !== p.month - 1 || probe.getUTCDate() !== p.day) return undefined; // Feb 30, Apr 31, …
  if (p.hour > 23 || p.minute > 59 || p.second > 59) return undefined;
  if (p.digits.length > 9) return undefined;
  if (p.offset && (p.offset.h > 23 || p.offset.m > 59)) return undefined;
  const offsetS = p.offset ? BigInt((p.offset.h * 3600 + p.offset.m * 60) * (p.offset.sign === '-' ? -1 : 1)) : 0n;
  const ns = BigInt(civilMs(p.year, p.month, p.day, p.hour, p.minute, p.second)) * NS_PER_MS + BigInt(p.digits.padEnd(9, '0')) - offsetS * NS_PER_S;
  if (ns < RANGE_START_NS || ns >= RANGE_END_NS) return undefined;
  return { ns, canonical: canonicalOf(ns) };
}

/** The canonical form built from Date's ISO output for the seconds and the nine digits from the BigInt. */
function canonicalOf(ns: bigint): string {
  let s = ns / NS_PER_S;
  let frac = ns % NS_PER_S;
  if (frac < 0n) {
    frac += NS_PER_S;
    s -= 1n;
  }
  const iso = new Date(Number(s) * 1000).toISOString(); // four-digit years for 0000–9999
  return `${iso.slice(0, 19)}.${String(frac).padStart(9, '0')}Z`;
}

/** Ways to break a well-formed timestamp; each must be refused. */
const breakers: Array<[string, (s: string) => string]> = [
  ['space for T', (s) => s.replace('T', ' ')],
  ['lower-case t', (s) => s.replace('T', 't')],
  ['lower-case z', (s) => (s.endsWith('Z') ? `${s.slice(0, -1)}z` : `${s.slice(0, -6)}z`)],
  ['no zone', (s) => (s.endsWith('Z') ? s.slice(0, -1) : s.slice(0, -6))],
  ['offset without colon', (s) => (s.endsWith('Z') ? `${s.slice(0, -1)}+0200` : s.slice(0, -3) + s.slice(-2))],
  ['trailing text', (s) => `${s} `],
  ['dot without digits', (s) => s.slice(0, 19) + '.' + (s.endsWith('Z') ? 'Z' : s.slice(-6))],
  ['Arabic-Indic digit', (s) => `${s.slice(0, 3)}\u0663${s.slice(4)}`],
  ['full-width digit', (s) => `${s.slice(0, 12)}\uFF11${s.slice(13)}`],
  ['comma fraction', (s) => `${s.slice(0, 19)},5Z`],
  ['two-digit year', (s) => s.slice(2)],
  ['lone surrogate', (s) => `${s.slice(0, 17)}\uD800${s.slice(18)}`],
];

describe('parseEntryTime over generated timestamps', () => {
  it(`reads ${RUNS} generated timestamps exactly as the reference does, and never throws`, () => {
    const tally = { ok: 0, refused: 0, tooManyDigits: 0, exactByDigits: new Array<number>(10).fill(0) };
    fc.assert(
      fc.property(parts, (p) => {
        const s = format(p);
        const want = reference(p);
        const got = parseEntryTime(s);
        // the hot path's form agrees with the full parse on every input
        expect(entryTimeNs(s)).toBe(want?.ns);
        if (want === undefined) {
          expect(got.ok, `${s} should be refused`).toBe(false);
          if (!got.ok) expect(typeof got.reason).toBe('string');
          tally.refused++;
          if (p.digits.length > 9) tally.tooManyDigits++;
          return;
        }
        expect(got.ok, `${s} should parse`).toBe(true);
        if (!got.ok) return;
        expect(got.ns).toBe(want.ns);
        expect(got.canonical).toBe(want.canonical);
        expect(got.canonical).toHaveLength(30);
        // the canonical form reads back to the same instant
        const again = parseEntryTime(got.canonical);
        expect(again.ok && again.ns).toBe(want.ns);
        tally.ok++;
        tally.exactByDigits[p.digits.length]!++;
      }),
      { numRuns: RUNS, seed: Number(process.env.MLS_PROPERTY_SEED ?? 77) },
    );
    console.log(`timestamp property: ${RUNS} timestamps, ${tally.ok} parsed exactly (by digits 0–9: ${tally.exactByDigits.join('/')}), ${tally.refused} refused (${tally.tooManyDigits} for more than nine digits)`);
    expect(tally.ok + tally.refused).toBe(RUNS);
    expect(tally.exactByDigits.every((n) => n > 0)).toBe(true);
    expect(tally.tooManyDigits).toBeGreaterThan(0);
  });

  it('refuses more than nine fractional digits, whatever the digits', () => {
    fc.assert(
      fc.property(parts, fc.integer({ min: 10, max: 20 }), (p, n) => {
        const s = format({ ...p, year: 2024, month: 5, day: 1, hour: 12, minute: 0, second: 0, digits: p.digits.padEnd(n, '7').slice(0, n) });
        const r = parseEntryTime(s);
        expect(r.ok).toBe(false);
      }),
      { numRuns: runs(2_000) },
    );
  });

  it('canonical strings sort in the order of their nanoseconds', () => {
    const valid = parts.map((p) => ({ ...p, digits: p.digits.slice(0, 9) })).filter((p) => reference(p) !== undefined);
    fc.assert(
      fc.property(fc.array(valid, { minLength: 2, maxLength: 40 }), (list) => {
        const parsed = list.map((p) => parseEntryTime(format(p))).map((r) => {
          if (!r.ok) throw new Error(r.reason);
          return r;
        });
        const byText = [...parsed].sort((a, b) => (a.canonical < b.canonical ? -1 : a.canonical > b.canonical ? 1 : 0)).map((r) => r.ns);
        const byNs = [...parsed].sort((a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0)).map((r) => r.ns);
        expect(byText).toEqual(byNs);
        // equal instants written differently (offsets, trailing zeros) share one canonical form
        for (const a of parsed) for (const b of parsed) expect(a.canonical === b.canonical).toBe(a.ns === b.ns);
      }),
      { numRuns: runs(1_000) },
    );
  });

  it('refuses every broken variant of a valid timestamp', () => {
    const valid = parts.map((p) => ({ ...p, digits: p.digits.slice(0, 9) })).filter((p) => reference(p) !== undefined);
    fc.assert(
      fc.property(valid, fc.constantFrom(...breakers), (p, [name, breakIt]) => {
        const s = breakIt(format(p));
        const r = parseEntryTime(s);
        expect(r.ok, `${name}: ${JSON.stringify(s)}`).toBe(false);
      }),
      { numRuns: runs(3_000) },
    );
  });

  it('never throws on any string, and anything it accepts is a well-formed timestamp', () => {
    const shape = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
    const near = parts.chain((p) =>
      fc.record({ at: fc.nat(), ch: fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 2 }), fc.constantFrom('\uD800', '\uFFFD', '-', ':', '.', 'Z', '+')) }).map(({ at, ch }) => {
        const s = format(p);
        const i = at % (s.length + 1);
        return s.slice(0, i) + ch + s.slice(i + 1);
      }),
    );
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }), near), (s) => {
        let r: ReturnType<typeof parseEntryTime> | undefined;
        expect(() => (r = parseEntryTime(s))).not.toThrow();
        if (r!.ok) expect(s).toMatch(shape);
        expect(entryTimeNs(s)).toBe(r!.ok ? r!.ns : undefined);
      }),
      { numRuns: RUNS },
    );
    for (const v of [undefined, null, 42, {}, [], Symbol('x')]) expect(parseEntryTime(v as unknown as string).ok).toBe(false);
  });
});
