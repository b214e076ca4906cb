//! A page read by the scanner (scanner.ts): its entries stay byte ranges of the body. Times
//! and hashes are computed from the bytes, and the journal lines are copied from them, since
//! a string the scanner classed as plain or escaped is already in the form `JSON.stringify`
//! writes. Entry objects are built only if asked for. The page json.ts reads from the same
//! body gives the same entries, times, hashes and lines (property-tested).
import type { EntryField, ParsedPage } from '../types.js';
import { TIME_UNPARSABLE } from '../../records/off-spec.js';
import type { LogEntry } from '../../records/entry.js';
import { asciiContentHashInto, contentHash } from '../../dedupe/key.js';
import { entryTimeNs } from '../../time/timestamp.js';
import { LOG, OTHER, STREAM, TIME, decodeString, type Scan, type StringKind } from './scanner.js';

const FIELDS: Readonly<Record<EntryField, number>> = { time: TIME, stream: STREAM, log: LOG };
const STREAM_KEY = Buffer.from(',"stream":');
const LOG_KEY = Buffer.from(',"log":');
/** A line's bytes besides its head and its three strings' contents: the keys, six quotes and `}\n`. */
const LINE_REST = STREAM_KEY.length + LOG_KEY.length + 6 + 2;

/** Copies `src[from, to)` to `dst` at `at`; returns the new end. Short runs by hand: a native copy costs more than it moves. */
function put(dst: Buffer, at: number, src: Buffer, from: number, to: number): number {
  if (to - from > 48) return at + src.copy(dst, at, from, to);
  for (let i = from; i < to; i++) dst[at++] = src[i]!;
  return at;
}

/** A page whose entries are the spans of a {@link Scan}. */
export class ScannedPage implements ParsedPage {
  #entries: LogEntry[] | undefined;

  constructor(private readonly scan: Scan) {}

  get count(): number {
    return this.scan.count;
  }

  get nextToken(): string | undefined {
    return this.scan.nextToken;
  }

  get entries(): LogEntry[] {
    return (this.#entries ??= Array.from({ length: this.count }, (_, i) => ({ time: this.string(i, TIME), log: this.string(i, LOG), stream: this.string(i, STREAM) })));
  }

  text(i: number, field: EntryField): string {
    return this.string(i, FIELDS[field]);
  }

  /** The value of field `f` of entry `i`. */
  private string(i: number, f: number): string {
    const { body, spans, kinds } = this.scan;
    return decodeString(body, spans[6 * i + 2 * f]!, spans[6 * i + 2 * f + 1]!, kinds[3 * i + f] as StringKind);
  }

  /** Whether entry `i`'s strings are all in their canonical JSON form as they stand. */
  private canonical(i: number): boolean {
    const k = this.scan.kinds;
    return k[3 * i + TIME] !== OTHER && k[3 * i + STREAM] !== OTHER && k[3 * i + LOG] !== OTHER;
  }

  keys(timesNs: BigInt64Array, hashes: Float64Array): Uint8Array | undefined {
    const { body, spans, kinds, count } = this.scan;
    const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
    let codes: Uint8Array | undefined;
    for (let i = 0; i < count; i++) {
      const s = 6 * i;
      const ns = entryTimeNs(this.string(i, TIME));
      if (ns === undefined) {
        (codes ??= new Uint8Array(count))[i] = TIME_UNPARSABLE;
        continue;
      }
      timesNs[i] = ns;
      if (kinds[3 * i + STREAM] !== OTHER && kinds[3 * i + LOG] !== OTHER) asciiContentHashInto(hashes, i, body, view, spans[s + 2]!, spans[s + 3]!, spans[s + 4]!, spans[s + 5]!);
      else hashes[i] = contentHash(this.string(i, STREAM), this.string(i, LOG));
    }
    return codes;
  }

  /**
   * Copies each line's strings from the body; the line of an entry with a string not
   * canonical as it stands (non-ASCII or `\u` escapes: a few in a hundred) is built as text.
   */
  render(modelId: string, kept: Uint32Array, n: number): Buffer {
    const { body, spans } = this.scan;
    const headText = '{"model_id":' + JSON.stringify(modelId) + ',"time":';
    const head = Buffer.from(headText);
    let others: Map<number, string> | undefined;
    let size = 0;
    for (let k = 0; k < n; k++) {
      const i = kept[k]!;
      if (this.canonical(i)) {
        const s = 6 * i;
        size += head.length + LINE_REST + spans[s + 1]! - spans[s]! + spans[s + 3]! - spans[s + 2]! + spans[s + 5]! - spans[s + 4]!;
      } else {
        const line = headText + JSON.stringify(this.string(i, TIME)) + ',"stream":' + JSON.stringify(this.string(i, STREAM)) + ',"log":' + JSON.stringify(this.string(i, LOG)) + '}\n';
        (others ??= new Map()).set(k, line);
        size += Buffer.byteLength(line);
      }
    }
    const out = Buffer.allocUnsafe(size);
    /** Writes field `f` of entry `i` as its JSON string, quotes included, as it stands in the body. */
    const quoted = (at: number, i: number, f: number): number => put(out, at, body, spans[6 * i + 2 * f]! - 1, spans[6 * i + 2 * f + 1]! + 1);
    let at = 0;
    for (let k = 0; k < n; k++) {
      const line = others?.get(k);
      if (line !== undefined) {
        at += out.write(line, at);
        continue;
      }
      const i = kept[k]!;
      at = quoted(put(out, at, head, 0, head.length), i, TIME);
      at = quoted(put(out, at, STREAM_KEY, 0, STREAM_KEY.length), i, STREAM);
      at = quoted(put(out, at, LOG_KEY, 0, LOG_KEY.length), i, LOG);
      out[at++] = 0x7d;
      out[at++] = 0x0a;
    }
    return out;
  }
}
