//! The plain reader of a logs page: `JSON.parse` and the validation against the spec, for
//! every body the scanner leaves (scanner.ts). A malformed body (not JSON, no `details`
//! array, a bad `next_token`, a status other than `success`) is an `ApiProtocolError`; an
//! off-spec entry is kept, its fields as text ({@link fieldText}), and marked with the
//! reason (records/off-spec.ts), so that it does not stop the page.
import type { EntryField, ParsedPage } from '../types.js';
import { LOG_NOT_STRING, NOT_AN_OBJECT, STREAM_NOT_STRING, TIME_UNPARSABLE } from '../../records/off-spec.js';
import type { LogEntry } from '../../records/entry.js';
import { renderEntryLines } from '../../records/ndjson.js';
import { contentHash } from '../../dedupe/key.js';
import { entryTimeNs } from '../../time/timestamp.js';
import { parseSuccessObject, protocolError } from '../wire.js';

/** A validated page of the *get model logs* response. */
export interface LogsBody {
  entries: LogEntry[];
  /**
   * Per entry, the code of why it is off the spec when its element is not an object or its
   * stream or log not a string (0: neither); `undefined` when no entry is. Times are checked
   * by {@link ObjectsPage.keys}.
   */
  offSpec: Uint8Array | undefined;
  /** `undefined` when the service signalled the end: `next_token` absent, `null` or `""`. */
  nextToken: string | undefined;
}

/** A value deeper than this is shipped as {@link TOO_DEEP}: the text must not depend on the stack left. */
const MAX_DEPTH = 64;
const TOO_DEEP = '[a JSON value nested deeper than 64 levels]';

function tooDeep(v: unknown, depth: number): boolean {
  if (v === null || typeof v !== 'object') return false;
  return depth >= MAX_DEPTH || Object.values(v).some((x) => tooDeep(x, depth + 1));
}

/** An entry field as it is shipped: a string as it is, a missing one as "", any other value as its JSON text. */
export function fieldText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined) return '';
  return tooDeep(v, 0) ? TOO_DEEP : JSON.stringify(v);
}

/**
 * Validates a *get model logs* response body: `status` is `success`, `details` is an array
 * and `next_token` is a string, `null` or absent. Entries are copied, so extra fields do not
 * travel further; an entry off the spec is kept with its fields as text and marked.
 * @throws ApiProtocolError for a body off the spec.
 */
export function parseLogsBody(body: string, status: number): LogsBody {
  const obj = parseSuccessObject(body, status, 'logs');
  const details = obj.details;
  if (!Array.isArray(details)) {
    throw protocolError(`the logs response (HTTP ${status}) has no "details" array`, body, status);
  }
  const entries: LogEntry[] = new Array(details.length);
  let offSpec: Uint8Array | undefined;
  for (let i = 0; i < details.length; i++) {
    const d: unknown = details[i];
    if (d === null || typeof d !== 'object' || Array.isArray(d)) {
      entries[i] = { time: '', log: fieldText(d), stream: '' };
      (offSpec ??= new Uint8Array(details.length))[i] = NOT_AN_OBJECT;
      continue;
    }
    const { time, log, stream } = d as Record<string, unknown>;
    entries[i] = { time: fieldText(time), log: fieldText(log), stream: fieldText(stream) };
    const code = typeof stream !== 'string' ? STREAM_NOT_STRING : typeof log !== 'string' ? LOG_NOT_STRING : 0;
    if (code !== 0) (offSpec ??= new Uint8Array(details.length))[i] = code;
  }
  const token = obj.next_token;
  let nextToken: string | undefined;
  if (token === undefined || token === null || token === '') nextToken = undefined;
  else if (typeof token === 'string') nextToken = token;
  else throw protocolError(`the logs response (HTTP ${status}) has a "next_token" that is a ${typeof token}, not a string`, body, status);
  return { entries, offSpec, nextToken };
}

/** A page of entry objects: what `JSON.parse` gives. Its strings are its own: the body is not kept. */
export class ObjectsPage implements ParsedPage {
  constructor(
    readonly entries: LogEntry[],
    readonly nextToken: string | undefined,
    private readonly offSpec: Uint8Array | undefined,
  ) {}

  get count(): number {
    return this.entries.length;
  }

  text(i: number, field: EntryField): string {
    return this.entries[i]![field];
  }

  keys(timesNs: BigInt64Array, hashes: Float64Array): Uint8Array | undefined {
    const entries = this.entries;
    let codes = this.offSpec?.slice();
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      const ns = entryTimeNs(e.time);
      if (ns === undefined) {
        codes ??= new Uint8Array(entries.length);
        if (codes[i] !== NOT_AN_OBJECT) codes[i] = TIME_UNPARSABLE;
        continue;
      }
      timesNs[i] = ns;
      hashes[i] = contentHash(e.stream, e.log);
    }
    return codes;
  }

  render(modelId: string, kept: Uint32Array, n: number): Buffer {
    return renderEntryLines(modelId, this.entries, kept, n);
  }
}

/**
 * Reads a logs body by `JSON.parse`.
 * @throws ApiProtocolError for a body off the spec.
 */
export function readJsonPage(body: Buffer, status: number): ObjectsPage {
  const { entries, offSpec, nextToken } = parseLogsBody(body.toString('utf8'), status);
  return new ObjectsPage(entries, nextToken, offSpec);
}
