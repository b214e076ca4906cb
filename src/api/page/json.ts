//! The last path of a logs page: `JSON.parse` and the full validation against the spec,
//! for every body the scanners leave, and the page of entry objects it gives. It builds an
//! object per entry and costs about twice as much per entry as a scanner; it is also the
//! path that explains a malformed body (`ApiProtocolError`).
import type { EntryField, ParsedPage } from '../types.js';
import type { LogEntry } from '../../records/entry.js';
import { renderEntryLines } from '../../records/ndjson.js';
import { CONTENT_HASH, entryHash, type ContentHash } from '../../dedupe/key.js';
import { entryTimeNs } from '../../time/timestamp.js';
import { parseSuccessObject, protocolError, type WireOptions } from '../wire.js';

/** A validated page of the *get model logs* response. */
export interface LogsBody {
  entries: LogEntry[];
  /** `undefined` when the service signalled the end: `next_token` absent, `null` or `""`. */
  nextToken: string | undefined;
}

/**
 * Validates a *get model logs* response body: `status` is `success`, `details` is an array
 * of objects with string `time`, `log` and `stream`, and `next_token` is a string, `null`
 * or absent. Entries are copied, so extra fields do not travel further.
 * @throws ApiProtocolError for anything off-spec.
 */
export function parseLogsBody(body: string, status: number, options: WireOptions = {}): LogsBody {
  const obj = parseSuccessObject(body, status, 'logs', options);
  const details = obj.details;
  if (!Array.isArray(details)) {
    throw protocolError(`the logs response (HTTP ${status}) has no "details" array`, body, status, options);
  }
  const entries: LogEntry[] = new Array(details.length);
  for (let i = 0; i < details.length; i++) {
    const d: unknown = details[i];
    if (d === null || typeof d !== 'object' || Array.isArray(d)) {
      throw protocolError(`the logs response (HTTP ${status}) has details[${i}] that is not an object`, body, status, options);
    }
    const { time, log, stream } = d as Record<string, unknown>;
    if (typeof time !== 'string' || typeof log !== 'string' || typeof stream !== 'string') {
      const field = typeof time !== 'string' ? 'time' : typeof log !== 'string' ? 'log' : 'stream';
      throw protocolError(`the logs response (HTTP ${status}) has details[${i}].${field} that is not a string`, body, status, options);
    }
    entries[i] = { time, log, stream };
  }
  const token = obj.next_token;
  let nextToken: string | undefined;
  if (token === undefined || token === null || token === '') nextToken = undefined;
  else if (typeof token === 'string') nextToken = token;
  else throw protocolError(`the logs response (HTTP ${status}) has a "next_token" that is a ${typeof token}, not a string`, body, status, options);
  return { entries, nextToken };
}


/** A page of entry objects: what `JSON.parse` gives. Its strings are its own: the body is not kept. */
export class ObjectsPage implements ParsedPage {
  readonly path = 'json';

  constructor(
    readonly entries: LogEntry[],
    readonly nextToken: string | undefined,
  ) {}

  get count(): number {
    return this.entries.length;
  }

  release(): void {}

  text(i: number, field: EntryField): string {
    return this.entries[i]![field];
  }

  keys(timesNs: BigInt64Array, hashes: Float64Array): Uint8Array | undefined {
    const entries = this.entries;
    let badTime: Uint8Array | undefined;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      const ns = entryTimeNs(e.time);
      if (ns === undefined) {
        (badTime ??= new Uint8Array(entries.length))[i] = 1;
        continue;
      }
      timesNs[i] = ns;
      hashes[i] = entryHash(CONTENT_HASH, e.stream, e.log);
    }
    return badTime;
  }

  hash(hash: ContentHash, i: number, badTime?: string): number {
    const e = this.entries[i]!;
    return entryHash(hash, e.stream, e.log, badTime);
  }

  render(modelId: string, kept: Uint32Array, n: number): Buffer {
    return renderEntryLines(modelId, this.entries, kept, n);
  }
}

/**
 * Reads a logs body by the JSON path. The body's buffer is handed to `giveBack` once read:
 * the entries do not point into it.
 * @throws ApiProtocolError for anything off-spec.
 */
export function readJsonPage(body: Buffer, status: number, options: WireOptions, giveBack: ((body: Buffer) => void) | undefined): ObjectsPage {
  const { entries, nextToken } = parseLogsBody(body.toString('utf8'), status, options);
  giveBack?.(body);
  return new ObjectsPage(entries, nextToken);
}
