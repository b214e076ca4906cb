//! A page read by one of the body scanners: its entries stay byte ranges of the body. Times
//! and hashes are computed from the bytes, and the journal lines are copied from them,
//! since a string the scanner classed as plain or escaped is already in the form
//! `JSON.stringify` writes. Entry objects are built only if asked for. The lines are copied
//! by the WebAssembly kernel when it read the page; both give the same bytes (property-tested).
import type { EntryField, PagePath, ParsedPage } from '../types.js';
import type { LogEntry } from '../../records/entry.js';
import { CONTENT_HASH, asciiContentHashInto, entryHash, type ContentHash } from '../../dedupe/key.js';
import { entryTimeNs, writeEntryTimeNs } from '../../time/timestamp.js';
import type { PageKernel } from './kernel/page-kernel.js';
import { LOG, NOT_THIS_PATH, OTHER, PLAIN, STREAM, TIME, scannedString, type Scan } from './scan.js';

const FIELDS: Readonly<Record<EntryField, number>> = { time: TIME, stream: STREAM, log: LOG };
const STREAM_KEY = Buffer.from(',"stream":');
const LOG_KEY = Buffer.from(',"log":');
const LINE_END = Buffer.from('}\n');

/** Copies `src[from, to)` to `dst` at `at`; returns the new end. Short runs by hand: a native copy costs more than it moves. */
function put(dst: Buffer, at: number, src: Buffer, from: number, to: number): number {
  if (to - from > 48) return at + src.copy(dst, at, from, to);
  for (let i = from; i < to; i++) dst[at++] = src[i]!;
  return at;
}

/** A page whose entries are the spans of a {@link Scan}. */
export class ScannedPage implements ParsedPage {
  #entries: LogEntry[] | undefined;
  #released = false;
  #view: DataView | undefined;

  /**
   * @param kernel the kernel that scanned the page, which also renders its lines; `undefined` when the JavaScript scanner did.
   * @param giveBack takes the body back once the page is released.
   */
  constructor(
    readonly path: Exclude<PagePath, 'json'>,
    private readonly scan: Scan,
    private readonly kernel: PageKernel | undefined,
    private readonly giveBack: ((body: Buffer) => void) | undefined,
  ) {}

  get count(): number {
    return this.scan.count;
  }

  get nextToken(): string | undefined {
    return this.scan.nextToken;
  }

  get entries(): LogEntry[] {
    if (this.#entries === undefined && this.#released) throw new Error('the page was released: its body can no longer be read');
    return (this.#entries ??= this.objects());
  }

  private objects(): LogEntry[] {
    const scan = this.scan;
    const out: LogEntry[] = new Array(scan.count);
    for (let i = 0; i < scan.count; i++) {
      out[i] = { time: scannedString(scan, i, TIME), log: scannedString(scan, i, LOG), stream: scannedString(scan, i, STREAM) };
    }
    return out;
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.giveBack?.(this.scan.body);
  }

  text(i: number, field: EntryField): string {
    return scannedString(this.scan, i, FIELDS[field]);
  }

  /** A DataView of the body, for the hashes that read it four bytes at a time. */
  private bodyView(): DataView {
    const { body } = this.scan;
    return (this.#view ??= new DataView(body.buffer, body.byteOffset, body.byteLength));
  }

  keys(timesNs: BigInt64Array, hashes: Float64Array): Uint8Array | undefined {
    const { body, spans, kinds, count } = this.scan;
    const halves = new Uint32Array(timesNs.buffer, timesNs.byteOffset, 2 * count);
    const view = this.bodyView();
    let badTime: Uint8Array | undefined;
    for (let i = 0; i < count; i++) {
      const s = 6 * i;
      let ok: boolean;
      if (kinds[3 * i + TIME] === PLAIN) {
        ok = writeEntryTimeNs(body, spans[s]!, spans[s + 1]!, halves, 2 * i);
      } else {
        const ns = entryTimeNs(scannedString(this.scan, i, TIME));
        ok = ns !== undefined;
        if (ok) timesNs[i] = ns!;
      }
      if (!ok) {
        (badTime ??= new Uint8Array(count))[i] = 1;
      } else if (kinds[3 * i + STREAM] !== OTHER && kinds[3 * i + LOG] !== OTHER) {
        // hash()'s usual case written out: this loop is on every page's path.
        asciiContentHashInto(hashes, i, body, view, spans[s + 2]!, spans[s + 3]!, spans[s + 4]!, spans[s + 5]!);
      } else {
        hashes[i] = this.hash(CONTENT_HASH, i);
      }
    }
    return badTime;
  }

  /** From the body's bytes where the stream and log are canonical as they stand, else from their strings. */
  hash(hash: ContentHash, i: number, badTime?: string): number {
    const { body, spans, kinds } = this.scan;
    const s = 6 * i;
    if (badTime === undefined && kinds[3 * i + STREAM] !== OTHER && kinds[3 * i + LOG] !== OTHER) {
      return hash.ascii(body, this.bodyView(), spans[s + 2]!, spans[s + 3]!, spans[s + 4]!, spans[s + 5]!);
    }
    return entryHash(hash, scannedString(this.scan, i, STREAM), scannedString(this.scan, i, LOG), badTime);
  }

  render(modelId: string, kept: Uint32Array, n: number): Buffer {
    const { body, spans, kinds, count } = this.scan;
    const headText = '{"model_id":' + JSON.stringify(modelId) + ',"time":';
    const head = Buffer.from(headText);
    const lines = this.kernel?.render({ body, spans, kinds, count, kept, n, head, otherLine: (i) => this.otherLine(headText, i) }) ?? NOT_THIS_PATH;
    return lines === NOT_THIS_PATH ? this.renderInJs(headText, head, kept, n) : lines;
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
