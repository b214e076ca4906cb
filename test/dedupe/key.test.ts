// The content hash is stored in every dedupe bucket, so its values are pinned here, and its
// forms (from strings, from a body's plain or escaped bytes) are held to a plain reference.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { asciiContentHashInto, contentHash, legacyContentHash, untimedHash } from '../../src/dedupe/key.js';
import { runs } from '../helpers/long.js';

/** The hash written out step by step from its description, one byte at a time. */
function reference(stream: Uint8Array, log: Uint8Array): number {
  const P1 = 2654435761, P2 = 2246822519, P3 = 3266489917, P4 = 668265263, P5 = 374761393;
  const rotl = (x: number, r: number) => (x << r) | (x >>> (32 - r));
  const word = (b: Uint8Array, i: number) => (b[i]! + b[i + 1]! * 256 + b[i + 2]! * 65536 + b[i + 3]! * 16777216) | 0;
  let seed = 0x3c6ef372 ^ stream.length;
  for (const c of stream) seed = Math.imul(seed ^ c, P1);
  seed ^= seed >>> 15;
  const round = (acc: number, w: number) => Math.imul(rotl((acc + Math.imul(w, P2)) | 0, 13), P1);
  let h1: number;
  let h2: number;
  let p = 0;
  if (log.length >= 16) {
    const lanes = [(seed + P1 + P2) | 0, (seed + P2) | 0, seed | 0, (seed - P1) | 0];
    for (; p + 16 <= log.length; p += 16) for (let k = 0; k < 4; k++) lanes[k] = round(lanes[k]!, word(log, p + 4 * k));
    const [a, b, c, d] = lanes as [number, number, number, number];
    h1 = (rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18)) | 0;
    h2 = ((rotl(a, 19) ^ rotl(b, 3)) + (rotl(c, 27) ^ rotl(d, 9))) | 0;
  } else {
    h1 = (seed + P5) | 0;
    h2 = (seed ^ P4) | 0;
  }
  h1 = (h1 + log.length) | 0;
  h2 = (h2 ^ Math.imul(log.length, P3)) | 0;
  for (; p + 4 <= log.length; p += 4) {
    h1 = Math.imul(rotl((h1 + Math.imul(word(log, p), P3)) | 0, 17), P4);
    h2 = Math.imul(rotl((h2 ^ Math.imul(word(log, p), P1)) | 0, 15), P2);
  }
  for (; p < log.length; p++) {
    h1 = Math.imul(rotl((h1 + Math.imul(log[p]!, P5)) | 0, 11), P1);
    h2 = Math.imul(rotl((h2 ^ Math.imul(log[p]!, P3)) | 0, 13), P4);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 15), P2);
  h1 = Math.imul(h1 ^ (h1 >>> 13), P3);
  h1 ^= h1 >>> 16;
  h2 = Math.imul(h2 ^ (h2 >>> 16), P3);
  h2 = Math.imul(h2 ^ (h2 >>> 13), P2);
  h2 ^= h2 >>> 15;
  h2 ^= Math.imul(h1, P5);
  return 4294967296 * (h2 & 0x1fffff) + (h1 >>> 0);
}

/** What the hash reads of a string: its JSON form without the quotes, in UTF-8. */
const json = (s: string) => new Uint8Array(Buffer.from(JSON.stringify(s).slice(1, -1), 'utf8'));

/** The two strings as JSON in a body, and where their contents lie. */
function inBody(stream: string, log: string, pad: number) {
  const s = JSON.stringify(stream);
  const l = JSON.stringify(log);
  const body = Buffer.from(`${' '.repeat(pad)}{"stream":${s},"log":${l}}`, 'latin1');
  const streamStart = pad + 11;
  const logStart = streamStart + s.length - 1 + 8;
  return {
    body,
    view: new DataView(body.buffer, body.byteOffset, body.byteLength),
    streamStart,
    streamEnd: streamStart + s.length - 2,
    logStart,
    logEnd: logStart + l.length - 2,
  };
}

/** ASCII strings whose JSON form uses only the escapes the scanner calls ESCAPED (no `\u`). */
const asciiEscapable = fc.string({
  unit: fc.oneof(fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), fc.constantFrom('\n', '\t', '\r', '\b', '\f', '"', '\\')),
  maxLength: 90,
});

describe('content hash', () => {
  it('keeps its pinned values (stored dedupe keys depend on them)', () => {
    const vectors: [string, string, number][] = [
      ['stdout', '', 1018932780764539],
      ['stdout', 'hello', 1346924517987053],
      ['stderr', 'naïve ✓', 4791077626656880],
      ['stdout', 'a\nb"c\\', 1078406967263356],
      ['', 'x'.repeat(100), 6593940602779313],
      ['stdout', '\ud800 lone', 2877158783050551],
      ['stdout', 'INFO [worker-1] POST /predict 200 in 12.5ms', 793838435195345],
      ['stderr', '模型 🚀 emoji', 3796917652500683],
    ];
    for (const [stream, log, hash] of vectors) expect(contentHash(stream, log), JSON.stringify([stream, log])).toBe(hash);
  });

  it('keys an entry without a time by its time\'s text, its stream and its log, as earlier versions did', () => {
    expect(untimedHash('yesterday at noon', 'stdout', 'a line whose time does not parse')).toBe(2501030591251745);
    expect(untimedHash('yesterday at noon', 'stdout', 'x')).not.toBe(untimedHash('yesterday at noon', 'stdout', 'y'));
    expect(untimedHash('a', 'stdout', 'x')).not.toBe(untimedHash('b', 'stdout', 'x'));
  });

  it('keeps the earlier hash exactly as earlier versions computed it', () => {
    const vectors: [string, string, number][] = [
      ['stdout', '', 8373915503248157],
      ['stdout', 'hello', 6015652828269704],
      ['stderr', 'naïve ✓', 3120240939618488],
      ['stdout', 'a\nb"c\\', 5416120870903258],
      ['', 'x'.repeat(100), 1401922224148822],
      ['stdout', '\ud800 lone', 269153902196723],
    ];
    for (const [stream, log, hash] of vectors) expect(legacyContentHash(stream, log), JSON.stringify([stream, log])).toBe(hash);
  });

  it('equals the byte-at-a-time reference over the strings\' JSON, for any strings', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: 'binary', maxLength: 12 }), fc.constantFrom('stdout', 'stderr')),
        fc.oneof(fc.string({ unit: 'grapheme', maxLength: 120 }), fc.string({ unit: 'binary', maxLength: 120 }), fc.string({ unit: 'binary-ascii', maxLength: 120 })),
        (stream, log) => {
          expect(contentHash(stream, log)).toBe(reference(json(stream), json(log)));
        },
      ),
      { numRuns: runs(3000) },
    );
  });

  it('gives the same number from a body\'s plain or escaped bytes as from the strings, at any alignment', () => {
    fc.assert(
      fc.property(asciiEscapable.map((s) => s.slice(0, 8)), asciiEscapable, fc.integer({ min: 0, max: 7 }), (stream, log, pad) => {
        const b = inBody(stream, log, pad);
        expect(JSON.parse(b.body.toString('latin1', b.logStart - 1, b.logEnd + 1))).toBe(log);
        const out = new Float64Array(3);
        asciiContentHashInto(out, pad % 3, b.body, b.view, b.streamStart, b.streamEnd, b.logStart, b.logEnd);
        expect(out[pad % 3]).toBe(contentHash(stream, log));
        expect(out.filter((x) => x !== 0)).toHaveLength(contentHash(stream, log) === 0 ? 0 : 1); // only its own slot written
      }),
      { numRuns: runs(3000) },
    );
  });

  it('tells lone surrogates apart from each other and from the replacement character', () => {
    const hashes = ['\ud800', '\udbff', '\udc00', '\udfff', '\ufffd', '\ud800\udc00', '\udc00\ud800'].map((s) => contentHash('stdout', `x${s}y`));
    expect(new Set(hashes).size).toBe(hashes.length);
    // A pair is the code point it stands for, as UTF-8 encodes it.
    expect(contentHash('stdout', '\ud83d\ude80')).toBe(reference(json('stdout'), new Uint8Array([0xf0, 0x9f, 0x9a, 0x80])));
  });

  it('does not confuse where the stream ends and the text begins', () => {
    expect(contentHash('ab', 'c')).not.toBe(contentHash('a', 'bc'));
    expect(contentHash('', 'stdout')).not.toBe(contentHash('stdout', ''));
  });

  it('hashes long texts the same through its reused buffer as the reference', () => {
    const long = 'é✓ line '.repeat(40_000);
    expect(contentHash('stderr', long)).toBe(reference(json('stderr'), json(long)));
    expect(contentHash('stdout', 'short')).toBe(reference(json('stdout'), json('short')));
    // a long stream too: the text is written after it in the same room
    expect(contentHash('s'.repeat(5000), long)).toBe(reference(json('s'.repeat(5000)), json(long)));
  });

  it('spreads near-identical lines over all 53 bits without collisions', () => {
    const n = 200_000;
    const seen = new Set<number>();
    const ones = new Float64Array(53);
    for (let i = 0; i < n; i++) {
      const h = contentHash('stdout', `INFO [worker-${i % 7}] POST /embed 200 in ${(i / 10).toFixed(1)}ms req=${i}`);
      expect(Number.isSafeInteger(h) && h >= 0).toBe(true);
      seen.add(h);
      let x = h;
      for (let bit = 0; bit < 53; bit++) {
        ones[bit]! += x % 2;
        x = Math.floor(x / 2);
      }
    }
    expect(seen.size).toBe(n);
    for (let bit = 0; bit < 53; bit++) expect(Math.abs(ones[bit]! / n - 0.5), `bit ${bit}`).toBeLessThan(0.01);
  });
});
