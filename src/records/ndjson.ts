//! The NDJSON line every sink that writes text emits for one entry, and the journal stores.
import type { LogEntry, NdjsonChunk, RecordFields, SinkEntry } from './entry.js';

/**
 * Renders one entry as a JSON object on one line, keys in the order
 * `model_id`, `time`, `stream`, `log`, followed by `\n`. `time` is the service's
 * string unchanged. Newlines inside `log` are escaped, so one entry is always one line.
 */
export function entryToNdjson(e: SinkEntry): string {
  // Built by hand: JSON.stringify of an object costs a property walk per entry on the hot path.
  return (
    '{"model_id":' +
    JSON.stringify(e.modelId) +
    ',"time":' +
    JSON.stringify(e.time) +
    ',"stream":' +
    JSON.stringify(e.stream) +
    ',"log":' +
    JSON.stringify(e.log) +
    recordFieldsJson(e) +
    '}\n'
  );
}

/**
 * The fields processing added to a record, as they follow `log` in its line: `level`,
 * `lines` and `time_end`, `exception`, `message`, `attributes`, `trace_id`, `span_id` (each
 * only when present); empty for a raw entry.
 */
export function recordFieldsJson(r: RecordFields): string {
  let out = '';
  if (r.level !== undefined) out += ',"level":"' + r.level + '"';
  if (r.lines !== undefined) out += ',"lines":' + r.lines + ',"time_end":' + JSON.stringify(r.timeEnd);
  if (r.exception !== undefined) out += ',"exception":' + JSON.stringify(r.exception);
  if (r.message !== undefined) out += ',"message":' + JSON.stringify(r.message);
  if (r.attributes !== undefined) out += ',"attributes":' + JSON.stringify(r.attributes);
  if (r.traceId !== undefined) out += ',"trace_id":' + JSON.stringify(r.traceId);
  if (r.spanId !== undefined) out += ',"span_id":' + JSON.stringify(r.spanId);
  return out;
}

/** Whether JSON.stringify would write `s` between quotes unchanged. */
function plainJsonString(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 34 || c === 92 || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}

/**
 * Renders the lines of one model's entries exactly as {@link entryToNdjson} does, for the
 * journal's hot path: the model id is encoded once, the stream once per change, and the
 * time only when it holds a character JSON must escape.
 */
export class NdjsonLineBuilder {
  readonly #head: string;
  #stream: string | undefined;
  /** `,"stream":<stream>,"log":` for the last stream seen. */
  #middle = '';

  constructor(modelId: string) {
    this.#head = '{"model_id":' + JSON.stringify(modelId) + ',"time":';
  }

  /**
   * Appends the pieces of one line to `out`; `out.join('')` is the text. Pieces rather
   * than a line each: one flat string at the end instead of a chain of partial ones per line.
   */
  push(out: string[], time: string, stream: string, log: string): void {
    if (stream !== this.#stream) {
      this.#stream = stream;
      this.#middle = ',"stream":' + JSON.stringify(stream) + ',"log":';
    }
    if (plainJsonString(time)) out.push(this.#head, '"', time, '"', this.#middle, JSON.stringify(log), '}\n');
    else out.push(this.#head, JSON.stringify(time), this.#middle, JSON.stringify(log), '}\n');
  }
}

/** The lines of the entries at `kept[0..n)` of `entries`, in that order, as UTF-8. */
export function renderEntryLines(modelId: string, entries: readonly LogEntry[], kept: Uint32Array, n: number): Buffer {
  const lines = new NdjsonLineBuilder(modelId);
  // Pieces joined once at the end: a string grown line by line is a rope that every reader would flatten.
  const text: string[] = [];
  for (let k = 0; k < n; k++) {
    const e = entries[kept[k]!]!;
    lines.push(text, e.time, e.stream, e.log);
  }
  return Buffer.from(text.join(''));
}

/** The lines of a batch's NDJSON chunks as one buffer (the chunk itself when there is one). */
export function ndjsonBytes(chunks: readonly NdjsonChunk[]): Buffer {
  return chunks.length === 1 ? chunks[0]!.bytes : Buffer.concat(chunks.map((c) => c.bytes));
}
