//! The lines of a page slice read one after the other, without an object or a string per
//! line: a reader that decides most lines on their first bytes (processing) finds the stream
//! and where the text is in the page's bytes, and asks for the text, or the whole entry, of
//! the few lines that need it.
import type { SinkEntry } from '../records/entry.js';
import { journalHead, readLine, type LineFields } from './line-read.js';
import type { JournalPage } from './pages.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const STDOUT = Buffer.from(',"stream":"stdout"');
const STDERR = Buffer.from(',"stream":"stderr"');
const LOG = Buffer.from(',"log":"');
/** A line's end: the log's closing quote, `}`, the newline. */
const END = Buffer.from('"}\n');

/** A cursor over lines [from, to) of a page; {@link next} moves to the first. */
export class PageLineCursor {
  /** The current line's index in the page. */
  index: number;
  /** The page's times (ns since the epoch): the current line's is `times[index]`. */
  readonly times: BigInt64Array;
  stream = '';
  /** The page's bytes, and where the current line's text is in them (JSON-escaped; -1: not found, read {@link log}). */
  readonly bytes: Buffer;
  logFrom = -1;
  logTo = -1;
  readonly #page: JournalPage;
  readonly #to: number;
  readonly #starts: Int32Array;
  /** Characters and bytes of a line up to its time. */
  readonly #head: number;
  readonly #headBytes: number;
  /** The current line, and its text, once made. */
  #line: string | undefined;
  #log: string | undefined;
  readonly #fields: LineFields = { time: '', stream: '', log: '' };

  constructor(page: JournalPage, from: number, to: number) {
    this.#page = page;
    this.bytes = page.bytes;
    this.times = page.timesNs;
    this.index = from - 1;
    this.#to = to;
    this.#starts = page.starts();
    this.#head = journalHead(page.modelId);
    this.#headBytes = Buffer.byteLength('{"model_id":' + JSON.stringify(page.modelId) + ',"time":');
  }

  /** Moves to the next line; false past the last. */
  next(): boolean {
    if (this.index + 1 >= this.#to) return false;
    const i = ++this.index;
    this.#line = undefined;
    this.#log = undefined;
    if (!this.#scan(this.#starts[i]!, this.#starts[i + 1]!)) {
      this.logFrom = this.logTo = -1;
      const f = this.#read();
      this.stream = f.stream;
      this.#log = f.log;
    }
    return true;
  }

  /** The current line's exact time. */
  get timeNs(): bigint {
    return this.times[this.index]!;
  }

  /** The current line's text. */
  get log(): string {
    this.#log ??= this.#read().log;
    return this.#log;
  }

  /** The current line as the entry {@link JournalPage.decode} gives. */
  entry(): SinkEntry {
    const page = this.#page;
    const e: SinkEntry = { seq: page.firstSeq + this.index, modelId: page.modelId, time: '', timeNs: this.timeNs, stream: '', log: '', fetchedAtMs: page.fetchedMs };
    readLine(this.#text(), 0, this.#head, e);
    return e;
  }

  /** Line `index` of the page as the entry {@link JournalPage.decode} gives. */
  entryAt(index: number): SinkEntry {
    if (index === this.index) return this.entry();
    const page = this.#page;
    const e: SinkEntry = { seq: page.firstSeq + index, modelId: page.modelId, time: '', timeNs: page.timesNs[index]!, stream: '', log: '', fetchedAtMs: page.fetchedMs };
    readLine(this.bytes.toString('utf8', this.#starts[index]!, this.#starts[index + 1]! - 1), 0, this.#head, e);
    return e;
  }

  #read(): LineFields {
    readLine(this.#text(), 0, this.#head, this.#fields);
    return this.#fields;
  }

  #text(): string {
    this.#line ??= this.bytes.toString('utf8', this.#starts[this.index]!, this.#starts[this.index + 1]! - 1);
    return this.#line;
  }

  /**
   * Finds the stream and the text of the line in bytes [start, end), when the line has the
   * usual shape: `{"model_id":…,"time":"…","stream":"stdout"|"stderr","log":"…"}\n`.
   */
  #scan(start: number, end: number): boolean {
    const b = this.bytes;
    let at = start + this.#headBytes;
    if (b[at] !== QUOTE) return false;
    // A time string holds no escape: it ends at the next quote.
    for (at++; at < end && b[at] !== QUOTE; at++) if (b[at] === BACKSLASH) return false;
    at++;
    if (has(b, at, STDOUT)) this.stream = 'stdout';
    else if (has(b, at, STDERR)) this.stream = 'stderr';
    else return false;
    at += STDOUT.length;
    if (!has(b, at, LOG)) return false;
    at += LOG.length;
    const close = end - END.length;
    if (close < at || !has(b, close, END)) return false;
    // The closing quote is not one escaped in the text.
    let backslashes = 0;
    for (let k = close - 1; k >= at && b[k] === BACKSLASH; k--) backslashes++;
    if (backslashes % 2 !== 0) return false;
    this.logFrom = at;
    this.logTo = close;
    return true;
  }
}

function has(b: Uint8Array, at: number, part: Uint8Array): boolean {
  if (at + part.length > b.length) return false;
  for (let i = 0; i < part.length; i++) if (b[at + i] !== part[i]) return false;
  return true;
}
