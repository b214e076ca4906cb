//! Turns a fetched page into what the journal commits: each entry's exact time and content
//! hash, and a way to render the NDJSON lines of the entries that turn out to be new.
//!
//! A page read by the body scanner (api/logs-scan.ts) never becomes objects: times and
//! hashes are computed from the body's bytes, and the lines are copied from them, since a
//! string the scanner classed as plain or escaped is already in the form `JSON.stringify`
//! writes. Pages the scanner left to `JSON.parse` go through the entry objects; both give
//! the same bytes (property-tested). The lines are copied by the WebAssembly page kernel
//! (api/kernel/page-kernel.ts) where it can.
import type { LogEntry } from '../api/types.js';
import { LOG, OTHER, PLAIN, STREAM, TIME, scannedString, type ScannedLogs } from '../api/logs-scan.js';
import { CONTENT_HASH, LEGACY_CONTENT_HASH, asciiContentHashInto, entryHash, type ContentHash } from '../dedupe/key.js';
import { EntryObjectsPage, type PreparedPage } from '../journal/prepared.js';
import { entryTimeNs, writeEntryTimeNs } from '../time/timestamp.js';
import { USE_JAVASCRIPT, pageKernel } from '../api/kernel/page-kernel.js';

/** A prepared page, and the entries whose time could not be parsed. */
export interface Prepared {
  page: PreparedPage;
  /** Entries kept with their original time text, keyed under the window start. */
  badTimes: number;
  /** The first such time, for the warning. */
  badExample: string | undefined;
}

const WINDOW_NS = 1_000_000n;

/** Prepares entries that were parsed into objects. */
export function prepareEntries(entries: readonly LogEntry[], windowFromMs: number): Prepared {
  const n = entries.length;
  const timesNs = new BigInt64Array(n);
  const hashes = new Float64Array(n);
  let badTimes = 0;
  let badExample: string | undefined;
  let badTime: Uint8Array | undefined;
  for (let i = 0; i < n; i++) {
    const e = entries[i]!;
    const ns = entryTimeNs(e.time);
    if (ns !== undefined) {
      timesNs[i] = ns;
      hashes[i] = entryHash(CONTENT_HASH, e.stream, e.log);
    } else {
      // Kept and delivered with its original text; keyed under the window start so it is deduped and pruned.
      badTimes++;
      badExample ??= e.time;
      (badTime ??= new Uint8Array(n))[i] = 1;
      timesNs[i] = BigInt(windowFromMs) * WINDOW_NS;
      hashes[i] = entryHash(CONTENT_HASH, e.stream, e.log, e.time);
    }
  }
  return { page: new EntryObjectsPage(entries, timesNs, hashes, badTime), badTimes, badExample };
}

/** Prepares the entries of a scanned body. */
export function prepareScanned(scan: ScannedLogs, windowFromMs: number): Prepared {
  const { body, spans, kinds, count } = scan;
  const timesNs = new BigInt64Array(count);
  const halves = new Uint32Array(timesNs.buffer);
  const hashes = new Float64Array(count);
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  let badTimes = 0;
  let badExample: string | undefined;
  let badTime: Uint8Array | undefined;
  for (let i = 0; i < count; i++) {
    const s = 6 * i;
    let time: string | undefined;
    let ok: boolean;
    if (kinds[3 * i + TIME] === PLAIN) {
      ok = writeEntryTimeNs(body, spans[s]!, spans[s + 1]!, halves, 2 * i);
    } else {
      time = scannedString(scan, i, TIME);
      const ns = entryTimeNs(time);
      ok = ns !== undefined;
      if (ok) timesNs[i] = ns!;
    }
    if (ok) {
      // scannedHash's usual case written out: this loop is on every page's path.
      if (kinds[3 * i + STREAM] !== OTHER && kinds[3 * i + LOG] !== OTHER) {
        asciiContentHashInto(hashes, i, body, view, spans[s + 2]!, spans[s + 3]!, spans[s + 4]!, spans[s + 5]!);
      } else {
        hashes[i] = scannedHash(CONTENT_HASH, scan, view, i, undefined);
      }
    } else {
      time ??= scannedString(scan, i, TIME);
      badTimes++;
      badExample ??= time;
      (badTime ??= new Uint8Array(count))[i] = 1;
      timesNs[i] = BigInt(windowFromMs) * WINDOW_NS;
      hashes[i] = scannedHash(CONTENT_HASH, scan, view, i, time);
    }
  }
  return { page: new ScannedPage(scan, timesNs, hashes, badTime), badTimes, badExample };
}

/**
 * {@link entryHash} of scanned entry `i` (`view` a DataView of the body): from the body's
 * bytes where its stream and log are canonical as they stand, else from their strings.
 */
function scannedHash(hash: ContentHash, scan: ScannedLogs, view: DataView, i: number, badTime: string | undefined): number {
  const { body, spans, kinds } = scan;
  const s = 6 * i;
  if (badTime === undefined && kinds[3 * i + STREAM] !== OTHER && kinds[3 * i + LOG] !== OTHER) {
    return hash.ascii(body, view, spans[s + 2]!, spans[s + 3]!, spans[s + 4]!, spans[s + 5]!);
  }
  return entryHash(hash, scannedString(scan, i, STREAM), scannedString(scan, i, LOG), badTime);
}

const STREAM_KEY = Buffer.from(',"stream":');
const LOG_KEY = Buffer.from(',"log":');
const LINE_END = Buffer.from('}\n');

/** Copies `src[from, to)` to `dst` at `at`; returns the new end. Short runs by hand: a native copy costs more than it moves. */
function put(dst: Buffer, at: number, src: Buffer, from: number, to: number): number {
  if (to - from > 48) return at + src.copy(dst, at, from, to);
  for (let i = from; i < to; i++) dst[at++] = src[i]!;
  return at;
}

class ScannedPage implements PreparedPage {
  constructor(
    private readonly scan: ScannedLogs,
    readonly timesNs: BigInt64Array,
    readonly hashes: Float64Array,
    private readonly badTime: Uint8Array | undefined,
  ) {}

  get length(): number {
    return this.scan.count;
  }

  #view: DataView | undefined;

  legacyHash(i: number): number {
    const { scan } = this;
    this.#view ??= new DataView(scan.body.buffer, scan.body.byteOffset, scan.body.byteLength);
    return scannedHash(LEGACY_CONTENT_HASH, scan, this.#view, i, this.badTime?.[i] ? scannedString(scan, i, TIME) : undefined);
  }

  render(modelId: string, kept: Uint32Array, n: number): Buffer {
    const { body, spans, kinds, count } = this.scan;
    const headText = '{"model_id":' + JSON.stringify(modelId) + ',"time":';
    const head = Buffer.from(headText);
    const lines = pageKernel()?.render({ body, spans, kinds, count, kept, n, head, otherLine: (i) => this.otherLine(headText, i) }) ?? USE_JAVASCRIPT;
    return lines === USE_JAVASCRIPT ? this.renderInJs(headText, head, kept, n) : lines;
  }

  /**
   * The line of entry `i`, one of whose strings is not canonical as it stands (non-ASCII
   * or `\u` escapes; a few in a hundred): built as one string, encoded once.
   */
  private otherLine(headText: string, i: number): Buffer {
    return Buffer.from(headText + this.fieldText(i, TIME) + ',"stream":' + this.fieldText(i, STREAM) + ',"log":' + this.fieldText(i, LOG) + '}\n');
  }

  /** A field's JSON string (quotes included) as text. */
  private fieldText(i: number, f: number): string {
    const { body, spans, kinds } = this.scan;
    if (kinds[3 * i + f] === OTHER) return JSON.stringify(scannedString(this.scan, i, f));
    // PLAIN and ESCAPED strings are ASCII, in the form JSON.stringify writes
    return body.toString('latin1', spans[6 * i + 2 * f]! - 1, spans[6 * i + 2 * f + 1]! + 1);
  }

  /** {@link render} without the kernel. */
  private renderInJs(headText: string, head: Buffer, kept: Uint32Array, n: number): Buffer {
    const { spans, kinds } = this.scan;
    // As in the kernel, an entry with a string not canonical as it stands gets its line from otherLine (rare).
    let others: Map<number, Buffer> | undefined;
    const fixed = head.length + STREAM_KEY.length + LOG_KEY.length + LINE_END.length;
    let size = 0;
    for (let k = 0; k < n; k++) {
      const i = kept[k]!;
      if (kinds[3 * i + TIME] === OTHER || kinds[3 * i + STREAM] === OTHER || kinds[3 * i + LOG] === OTHER) {
        const line = this.otherLine(headText, i);
        (others ??= new Map()).set(k, line);
        size += line.length;
      } else {
        const s = 6 * i;
        size += fixed + spans[s + 1]! - spans[s]! + spans[s + 3]! - spans[s + 2]! + spans[s + 5]! - spans[s + 4]! + 6;
      }
    }
    const out = Buffer.allocUnsafe(size);
    let at = 0;
    for (let k = 0; k < n; k++) {
      const line = others?.get(k);
      if (line) {
        at = put(out, at, line, 0, line.length);
        continue;
      }
      const i = kept[k]!;
      at = put(out, at, head, 0, head.length);
      at = this.quoted(out, at, i, TIME);
      at = put(out, at, STREAM_KEY, 0, STREAM_KEY.length);
      at = this.quoted(out, at, i, STREAM);
      at = put(out, at, LOG_KEY, 0, LOG_KEY.length);
      at = this.quoted(out, at, i, LOG);
      out[at++] = 0x7d;
      out[at++] = 0x0a;
    }
    return out;
  }

  /** Writes a canonical field's JSON string, quotes included, as it stands in the body. */
  private quoted(out: Buffer, at: number, i: number, f: number): number {
    const { body, spans } = this.scan;
    return put(out, at, body, spans[6 * i + 2 * f]! - 1, spans[6 * i + 2 * f + 1]! + 1);
  }
}
