// Generated response bodies for the logs operation: well-formed pages of every shape the
// spec allows, and bodies broken in every way a real service or proxy can break them.
// The parser never crashes: it throws ApiProtocolError, or it returns exactly the entries
// of the body. Every run is counted as accepted or rejected.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ApiProtocolError } from '../../src/api/errors.js';
import { parseLogsBody } from '../../src/api/wire.js';
import type { LogEntry } from '../../src/api/types.js';

const RUNS = 10_000;
const TOKEN = 'tok-WIRE-PROPERTY-5b2c';

/** What the body should do: be accepted with these values, be rejected, or either (judged by the reference). */
type Expect = { kind: 'accept'; entries: LogEntry[]; nextToken: string | undefined } | { kind: 'reject' } | { kind: 'reference' };
interface Case {
  category: string;
  body: string;
  expect: Expect;
}

// ---- text with every hazard -------------------------------------------------------------

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
/** Bytes that are not valid UTF-8, decoded the way the client decodes them (U+FFFD). */
const invalidUtf8Text = fc.uint8Array({ minLength: 1, maxLength: 40 }).map((bytes) => Buffer.from([0xc3, ...bytes, 0xff, 0xe2, 0x82]).toString('utf8'));
const hugeText = fc.constantFrom(10_000, 100_000, 1_000_000).chain((n) => fc.constantFrom('x', 'é', '\u{1F600}', '\n', '"', '\\').map((c) => c.repeat(n)));
const nastyText = fc.oneof(
  { weight: 6, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 2, arbitrary: fc.array(fc.oneof(loneSurrogate, fc.constant('\uFFFD'), fc.string({ maxLength: 3 })), { maxLength: 8 }).map((a) => a.join('')) },
  { weight: 2, arbitrary: invalidUtf8Text },
  { weight: 1, arbitrary: fc.constantFrom('', '\u0000', '\r\n', '</script>', '{"status":"success"}', TOKEN) },
  { weight: 1, arbitrary: hugeText },
);

/** JSON values nested `depth` levels deep. */
const deepValue = fc.integer({ min: 1, max: 20_000 }).chain((depth) =>
  fc.constantFrom('[', '{"a":').map((open) => {
    const close = open === '[' ? ']' : '}';
    return `${open.repeat(depth)}0${close.repeat(depth)}`;
  }),
);

/** Any JSON value as text, including deep ones (never parsed by the generator itself). */
const anyJsonText = fc.oneof(
  { weight: 5, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? 'null') },
  { weight: 1, arbitrary: deepValue },
  { weight: 1, arbitrary: nastyText.map((s) => JSON.stringify(s)) },
);

// ---- well-formed pages ---------------------------------------------------------------

const extraFields = fc.dictionary(
  fc.string({ maxLength: 8 }).filter((k) => !['time', 'log', 'stream', 'status', 'details', 'next_token', '__proto__'].includes(k)),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 3 },
);

const validEntry = fc.record({
  time: fc.oneof(fc.constantFrom('2024-05-01T12:00:00.123456789Z', '2024-05-01T12:00:00Z', '2024-05-01T14:00:00.5+02:00'), nastyText),
  log: nastyText,
  stream: fc.oneof(fc.constantFrom('stdout', 'stderr'), nastyText),
  extra: extraFields,
});

/** `next_token` as the spec allows it: absent, null, "" (the end) or a token. */
const validToken = fc.oneof(
  fc.constant({ present: false as const }),
  fc.constant({ present: true as const, value: null }),
  fc.constant({ present: true as const, value: '' }),
  nastyText.map((value) => ({ present: true as const, value })),
);

const wellFormed = fc
  .record({
    entries: fc.array(validEntry, { maxLength: 25 }),
    token: validToken,
    top: extraFields,
    order: fc.constantFrom('status-first', 'details-first', 'token-first'),
    spacing: fc.constantFrom(0, 2),
    rawSurrogates: fc.boolean(),
  })
  .map(({ entries, token, top, order, spacing, rawSurrogates }): Case => {
    const details = entries.map((e) => ({ ...e.extra, time: e.time, log: e.log, stream: e.stream }));
    const parts: Record<string, unknown> = { ...top };
    const put = { status: () => (parts.status = 'success'), details: () => (parts.details = details), token: () => token.present && (parts.next_token = token.value) };
    const keys = order === 'status-first' ? (['status', 'details', 'token'] as const) : order === 'details-first' ? (['details', 'token', 'status'] as const) : (['token', 'status', 'details'] as const);
    for (const k of keys) put[k]();
    let body = JSON.stringify(parts, null, spacing);
    // JSON.stringify escapes lone surrogates; a service may send them raw, which JSON.parse also reads.
    if (rawSurrogates) body = body.replace(/(?<=(?:^|[^\\])(?:\\\\)*)\\u(d[89a-f][0-9a-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    const expectedToken = !token.present || token.value === null || token.value === '' ? undefined : token.value;
    return {
      category: 'well-formed',
      body,
      expect: { kind: 'accept', entries: entries.map((e) => ({ time: e.time, log: e.log, stream: e.stream })), nextToken: expectedToken },
    };
  });

// ---- broken pages --------------------------------------------------------------------

/** A JSON value that is not a string. */
const finite = fc.double({ noNaN: true, noDefaultInfinity: true });
const notString = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  finite,
  fc.integer(),
  fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }),
);
const notArray = fc.oneof(fc.constant(null), fc.boolean(), finite, nastyText, fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }));
const notObject = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), nastyText, fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }));

/** A page with exactly one thing wrong, known to be off-spec. */
const broken: fc.Arbitrary<Case> = fc.oneof(
  // an entry field of the wrong type, or missing
  fc
    .record({ before: fc.array(validEntry, { maxLength: 5 }), field: fc.constantFrom('time', 'log', 'stream'), value: fc.option(notString, { nil: undefined }) })
    .map(({ before, field, value }): Case => {
      const bad: Record<string, unknown> = { time: 't', log: 'l', stream: 's' };
      if (value === undefined) delete bad[field];
      else bad[field] = value;
      const details = [...before.map((e) => ({ time: e.time, log: e.log, stream: e.stream })), bad];
      return { category: 'bad entry field', body: JSON.stringify({ status: 'success', details }), expect: { kind: 'reject' } };
    }),
  // an entry that is not an object
  fc.record({ before: fc.array(validEntry, { maxLength: 3 }), bad: notObject }).map(({ before, bad }): Case => ({
    category: 'entry not an object',
    body: JSON.stringify({ status: 'success', details: [...before.map((e) => ({ time: e.time, log: e.log, stream: e.stream })), bad] }),
    expect: { kind: 'reject' },
  })),
  // details missing or not an array
  fc.option(notArray, { nil: undefined }).map((details): Case => ({
    category: 'bad details',
    body: JSON.stringify({ status: 'success', ...(details !== undefined ? { details } : {}) }),
    expect: { kind: 'reject' },
  })),
  // status missing or not "success"
  fc.record({ status: fc.option(fc.oneof(nastyText.filter((s) => s !== 'success'), notString, fc.constantFrom('Success', 'SUCCESS', ' success', 'error')), { nil: undefined }), entries: fc.array(validEntry, { maxLength: 3 }) }).map(
    ({ status, entries }): Case => ({
      category: 'bad status',
      body: JSON.stringify({ ...(status !== undefined ? { status } : {}), details: entries.map((e) => ({ time: e.time, log: e.log, stream: e.stream })) }),
      expect: { kind: 'reject' },
    }),
  ),
  // next_token of every type that is not a string, null or absent
  fc.oneof(fc.boolean(), finite, fc.integer(), fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String).map(Number), fc.array(fc.string(), { maxLength: 2 }), fc.dictionary(fc.string({ maxLength: 3 }), fc.string(), { maxKeys: 2 })).map(
    (token): Case => ({ category: 'bad next_token', body: JSON.stringify({ status: 'success', details: [], next_token: token }), expect: { kind: 'reject' } }),
  ),
  // top level that is not an object
  fc.oneof(notObject.map((v) => JSON.stringify(v)), deepValue.filter((s) => s.startsWith('['))).map((body): Case => ({ category: 'top level not an object', body, expect: { kind: 'reject' } })),
  // a valid page cut short anywhere
  wellFormed.chain((c) =>
    fc.integer({ min: 0, max: Math.max(0, c.body.length - 1) }).map((cut): Case => ({ category: 'truncated', body: c.body.slice(0, cut), expect: { kind: 'reject' } })),
  ),
  // HTML from a proxy, with or without status 200 wording
  fc.record({ title: nastyText, doctype: fc.boolean(), lead: fc.constantFrom('', ' ', '\n', '\r\n\t') }).map(({ title, doctype, lead }): Case => ({
    category: 'html',
    body: `${lead}${doctype ? '<!DOCTYPE html>' : ''}<html><head><title>${title}</title></head><body><h1>502 Bad Gateway</h1></body></html>`,
    expect: { kind: 'reject' },
  })),
  // no body, or whitespace
  fc.constantFrom('', ' ', '\n', '\r\n\t ').map((body): Case => ({ category: 'empty', body, expect: { kind: 'reject' } })),
);

// ---- anything at all ---------------------------------------------------------------

/** Bodies whose outcome is judged by the reference reading of the spec. */
const arbitrary: fc.Arbitrary<Case> = fc.oneof(
  nastyText.map((body): Case => ({ category: 'random text', body, expect: { kind: 'reference' } })),
  anyJsonText.map((body): Case => ({ category: 'random JSON', body, expect: { kind: 'reference' } })),
  fc.uint8Array({ maxLength: 200 }).map((b): Case => ({ category: 'random bytes', body: Buffer.from(b).toString('utf8'), expect: { kind: 'reference' } })),
  fc.record({ details: anyJsonText, token: fc.option(anyJsonText, { nil: undefined }), status: fc.oneof(fc.constant('"success"'), anyJsonText) }).map(({ details, token, status }): Case => ({
    category: 'random fields',
    body: `{"status":${status},"details":${details}${token !== undefined ? `,"next_token":${token}` : ''}}`,
    expect: { kind: 'reference' },
  })),
  fc.array(fc.oneof(validEntry.map((e) => JSON.stringify({ time: e.time, log: e.log, stream: e.stream })), anyJsonText), { maxLength: 6 }).map((items): Case => ({
    category: 'mixed details',
    body: `{"status":"success","details":[${items.join(',')}]}`,
    expect: { kind: 'reference' },
  })),
);

/**
 * The spec's logs response read independently of the parser: JSON object, `status` is
 * "success", `details` an array of objects with string time/log/stream, `next_token` a
 * string, null or absent ("" is the end).
 */
function reference(body: string): { ok: true; entries: LogEntry[]; nextToken: string | undefined } | { ok: false } {
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch {
    return { ok: false };
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return { ok: false };
  const o = v as Record<string, unknown>;
  if (o.status !== 'success' || !Array.isArray(o.details)) return { ok: false };
  const entries: LogEntry[] = [];
  for (const d of o.details as unknown[]) {
    if (typeof d !== 'object' || d === null || Array.isArray(d)) return { ok: false };
    const r = d as Record<string, unknown>;
    if (typeof r.time !== 'string' || typeof r.log !== 'string' || typeof r.stream !== 'string') return { ok: false };
    entries.push({ time: r.time, log: r.log, stream: r.stream });
  }
  const t = o.next_token;
  if (t !== undefined && t !== null && typeof t !== 'string') return { ok: false };
  return { ok: true, entries, nextToken: t === null || t === '' || t === undefined ? undefined : t };
}

describe('parseLogsBody over generated bodies', () => {
  it(`never crashes on ${RUNS} bodies: a protocol error or exactly the body's entries, every run counted`, { timeout: 120_000 }, () => {
    let accepted = 0;
    let rejected = 0;
    let runs = 0;
    const byCategory = new Map<string, { accepted: number; rejected: number }>();
    const scrub = (text: string) => text.split(TOKEN).join('[REDACTED]');

    fc.assert(
      fc.property(fc.oneof({ weight: 3, arbitrary: wellFormed }, { weight: 4, arbitrary: broken }, { weight: 3, arbitrary: arbitrary }), (c) => {
        runs++;
        const tally = byCategory.get(c.category) ?? { accepted: 0, rejected: 0 };
        byCategory.set(c.category, tally);
        let result: ReturnType<typeof parseLogsBody> | undefined;
        let error: unknown;
        try {
          result = parseLogsBody(c.body, 200, { scrub });
        } catch (err) {
          error = err;
        }
        if (error !== undefined) {
          rejected++;
          tally.rejected++;
          expect(error).toBeInstanceOf(ApiProtocolError);
          const e = error as ApiProtocolError;
          expect(e.code).toBe('MLS_ERR_API_PROTOCOL');
          expect(e.status).toBe(200);
          expect(typeof e.message).toBe('string');
          expect((e.excerpt ?? '').length).toBeLessThanOrEqual(200);
          expect(e.excerpt ?? '').not.toContain(TOKEN);
          expect(e.message).not.toContain(TOKEN);
        } else {
          accepted++;
          tally.accepted++;
        }

        const want = c.expect.kind === 'reference' ? reference(c.body) : undefined;
        if (c.expect.kind === 'accept') {
          expect(error, `a well-formed body was refused: ${String(error)}`).toBeUndefined();
          expect(result!.entries).toEqual(c.expect.entries);
          expect(result!.nextToken).toBe(c.expect.nextToken);
        } else if (c.expect.kind === 'reject') {
          expect(result, `an off-spec body was accepted: ${c.body.slice(0, 200)}`).toBeUndefined();
        } else if (want!.ok) {
          expect(error, `the reference accepts this body: ${c.body.slice(0, 200)}`).toBeUndefined();
          expect(result!.entries).toEqual(want!.entries);
          expect(result!.nextToken).toBe(want!.nextToken);
        } else {
          expect(result, `the reference rejects this body: ${c.body.slice(0, 200)}`).toBeUndefined();
        }
        // entries are copies holding exactly the three spec fields
        for (const e of result?.entries ?? []) expect(Object.keys(e).sort()).toEqual(['log', 'stream', 'time']);
      }),
      { numRuns: RUNS, seed: Number(process.env.MLS_PROPERTY_SEED ?? 20240501) },
    );

    console.log(
      `wire property: ${runs} bodies, ${accepted} accepted, ${rejected} rejected; ` +
        [...byCategory].map(([k, v]) => `${k} ${v.accepted}/${v.rejected}`).join(', '),
    );
    expect(runs).toBe(RUNS);
    expect(accepted + rejected).toBe(runs);
    // every category was exercised, and broken categories only ever rejected
    for (const k of ['well-formed', 'bad entry field', 'entry not an object', 'bad details', 'bad status', 'bad next_token', 'top level not an object', 'truncated', 'html', 'empty', 'random text', 'random JSON', 'random bytes', 'random fields', 'mixed details']) {
      expect(byCategory.get(k), k).toBeDefined();
    }
    expect(byCategory.get('well-formed')!.rejected).toBe(0);
    expect(byCategory.get('truncated')!.accepted).toBe(0);
    expect(byCategory.get('html')!.accepted).toBe(0);
  });
});
