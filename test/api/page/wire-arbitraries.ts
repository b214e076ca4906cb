// Generated response bodies for the logs operation: well-formed pages of every shape the
// spec allows, pages with off-spec entries (kept, their fields as text), bodies broken in
// every way a real service or proxy can break them, and anything at all, each with what a
// reader of the spec must make of it.
import fc from 'fast-check';
import type { LogEntry } from '../../../src/records/entry.js';

export const TOKEN = 'tok-WIRE-PROPERTY-5b2c';

/** What the body should do: be accepted with these values, be rejected, or either (judged by the reference). Off-spec entries are judged by the reference. */
export type Expect = { kind: 'accept'; entries: LogEntry[]; nextToken: string | undefined } | { kind: 'reject' } | { kind: 'reference' };
export interface Case {
  category: string;
  body: string;
  expect: Expect;
}

// ---- text with every hazard -------------------------------------------------------------

export const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
/** Bytes that are not valid UTF-8, decoded the way the client decodes them (U+FFFD). */
export const invalidUtf8Text = fc.uint8Array({ minLength: 1, maxLength: 40 }).map((bytes) => Buffer.from([0xc3, ...bytes, 0xff, 0xe2, 0x82]).toString('utf8'));
export const hugeText = fc.constantFrom(10_000, 100_000, 1_000_000).chain((n) => fc.constantFrom('x', 'é', '\u{1F600}', '\n', '"', '\\').map((c) => c.repeat(n)));
export const nastyText = fc.oneof(
  { weight: 6, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 2, arbitrary: fc.array(fc.oneof(loneSurrogate, fc.constant('\uFFFD'), fc.string({ maxLength: 3 })), { maxLength: 8 }).map((a) => a.join('')) },
  { weight: 2, arbitrary: invalidUtf8Text },
  { weight: 1, arbitrary: fc.constantFrom('', '\u0000', '\r\n', '</script>', '{"status":"success"}', TOKEN) },
  { weight: 1, arbitrary: hugeText },
);

/** JSON values nested `depth` levels deep. */
export const deepValue = fc.integer({ min: 1, max: 20_000 }).chain((depth) =>
  fc.constantFrom('[', '{"a":').map((open) => {
    const close = open === '[' ? ']' : '}';
    return `${open.repeat(depth)}0${close.repeat(depth)}`;
  }),
);

/** Any JSON value as text, including deep ones (never parsed by the generator itself). */
export const anyJsonText = fc.oneof(
  { weight: 5, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? 'null') },
  { weight: 1, arbitrary: deepValue },
  { weight: 1, arbitrary: nastyText.map((s) => JSON.stringify(s)) },
);

// ---- well-formed pages ---------------------------------------------------------------

export const extraFields = fc.dictionary(
  fc.string({ maxLength: 8 }).filter((k) => !['time', 'log', 'stream', 'status', 'details', 'next_token', '__proto__'].includes(k)),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 3 },
);

export const validEntry = fc.record({
  time: fc.oneof(fc.constantFrom('2024-05-01T12:00:00.123456789Z', '2024-05-01T12:00:00Z', '2024-05-01T14:00:00.5+02:00'), nastyText),
  log: nastyText,
  stream: fc.oneof(fc.constantFrom('stdout', 'stderr'), nastyText),
  extra: extraFields,
});

/** `next_token` as the spec allows it: absent, null, "" (the end) or a token. */
export const validToken = fc.oneof(
  fc.constant({ present: false as const }),
  fc.constant({ present: true as const, value: null }),
  fc.constant({ present: true as const, value: '' }),
  nastyText.map((value) => ({ present: true as const, value })),
);

export const wellFormed = fc
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
export const finite = fc.double({ noNaN: true, noDefaultInfinity: true });
export const notString = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  finite,
  fc.integer(),
  fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }),
);
export const notArray = fc.oneof(fc.constant(null), fc.boolean(), finite, nastyText, fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }));
export const notObject = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), nastyText, fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }));

/** A page with one entry off the spec: accepted, the entry kept with its fields as text (see {@link reference}). */
export const offSpecEntry: fc.Arbitrary<Case> = fc.oneof(
  // an entry field of the wrong type, or missing
  fc
    .record({ before: fc.array(validEntry, { maxLength: 5 }), field: fc.constantFrom('time', 'log', 'stream'), value: fc.option(notString, { nil: undefined }) })
    .map(({ before, field, value }): Case => {
      const bad: Record<string, unknown> = { time: 't', log: 'l', stream: 's' };
      if (value === undefined) delete bad[field];
      else bad[field] = value;
      const details = [...before.map((e) => ({ time: e.time, log: e.log, stream: e.stream })), bad];
      return { category: 'bad entry field', body: JSON.stringify({ status: 'success', details }), expect: { kind: 'reference' } };
    }),
  // an entry that is not an object
  fc.record({ before: fc.array(validEntry, { maxLength: 3 }), bad: notObject }).map(({ before, bad }): Case => ({
    category: 'entry not an object',
    body: JSON.stringify({ status: 'success', details: [...before.map((e) => ({ time: e.time, log: e.log, stream: e.stream })), bad] }),
    expect: { kind: 'reference' },
  })),
);

/** A page with exactly one thing wrong, known to be off-spec. */
export const broken: fc.Arbitrary<Case> = fc.oneof(
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
export const arbitrary: fc.Arbitrary<Case> = fc.oneof(
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
 * "success", `details` an array, `next_token` a string, null or absent ("" is the end).
 * An entry off the spec is kept with its fields as text (a string as it is, a missing one
 * as "", any other value as its JSON, or a placeholder when nested deeper than 64 levels)
 * and the code of the first of its faults among: not an object (1; the element is the
 * log), a time that is not a string (2; a string time is checked later), a stream (3) or
 * a log (4) that is not a string.
 */
export function reference(body: string): { ok: true; entries: LogEntry[]; codes: number[]; nextToken: string | undefined } | { ok: false } {
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch {
    return { ok: false };
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return { ok: false };
  const o = v as Record<string, unknown>;
  if (o.status !== 'success' || !Array.isArray(o.details)) return { ok: false };
  const t = o.next_token;
  if (t !== undefined && t !== null && typeof t !== 'string') return { ok: false };
  const text = (x: unknown) => (typeof x === 'string' ? x : x === undefined ? '' : depth(x) > 64 ? '[a JSON value nested deeper than 64 levels]' : JSON.stringify(x));
  const entries: LogEntry[] = [];
  const codes: number[] = [];
  for (const d of o.details as unknown[]) {
    if (typeof d !== 'object' || d === null || Array.isArray(d)) {
      entries.push({ time: '', log: text(d), stream: '' });
      codes.push(1);
      continue;
    }
    const r = d as Record<string, unknown>;
    entries.push({ time: text(r.time), log: text(r.log), stream: text(r.stream) });
    codes.push(typeof r.time !== 'string' ? 2 : typeof r.stream !== 'string' ? 3 : typeof r.log !== 'string' ? 4 : 0);
  }
  return { ok: true, entries, codes, nextToken: t === null || t === '' || t === undefined ? undefined : t };
}

/** How deeply objects and arrays nest in `x` (0 for a scalar), counted without recursion. */
function depth(x: unknown): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[x, 0]];
  while (stack.length > 0) {
    const [y, d] = stack.pop()!;
    if (y === null || typeof y !== 'object') continue;
    max = Math.max(max, d + 1);
    for (const z of Object.values(y)) stack.push([z, d + 1]);
  }
  return max;
}
