//! The lines of a page slice read one after the other, without an object or a string per
//! line: a reader that decides most lines on their first bytes (processing) finds the stream
//! and where the text is in the page's bytes, and asks for the text, or the whole entry, of
//! the few lines that need it.
import type { SinkEntry } from '../records/entry.js';
import { journalHead, readLine, type LineFields } from './line-read.js';
import type { JournalPage } from './pages.js';
import { timeWords } from '../time/ns-words.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/**
 * `,"stream":"stdout","log":"` and its `stderr` twin, 26 bytes, as little-endian words at
 * offsets 0, 4, 8, 12, 16, 20 and a half-word at 24: compared a word at a time.
 */
const STREAM_AND_LOG = 26;
const word = (text: string, at: number): number => Buffer.from(text).readUInt32LE(at);
const HEAD = ',"stream":"stdout","log":"';
const W0 = word(HEAD, 0);
const W1 = word(HEAD, 4);
const W2 = word(HEAD, 8);
const OUT3 = word(HEAD, 12);
const OUT4 = word(HEAD, 16);
const ERR3 = word(',"stream":"stderr","log":"', 12);
const ERR4 = word(',"stream":"stderr","log":"', 16);
const W5 = word(HEAD, 20);
const H6 = Buffer.from(HEAD).readUInt16LE(24);
/** A line's end: the log's closing quote, `}`, the newline. */
const END = Buffer.from('"}\n');

/** A cursor over lines [from, to) of a page; {@link next} moves to the first. */
export class PageLineCursor {
  /** The current line's index in the page. */
  index: number;
  /** The page's times (ns since the epoch) as 32-bit words (see time/ns-words.ts): the current line's is time `index`. */
  readonly timeWords: Int32Array;
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
  readonly #view: DataView;
  /** The length of the last time string found by scanning (see #scan). */
  #timeLength = 0;

  constructor(page: JournalPage, from: number, to: number) {
    this.#page = page;
    this.bytes = page.bytes;
    this.#view = new DataView(page.bytes.buffer, page.bytes.byteOffset, page.bytes.byteLength);
    this.timeWords = timeWords(page.timesNs);
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
    return this.#page.timesNs[this.index]!;
  }

  /** The current line's text. */
  get log(): string {
    this.#log ??= this.#read().log;
    return this.#log;
  }

  /** The current line as the entry {@link JournalPage.decode} gives. */
  entry(): SinkEntry {
    return this.entryAt(this.index);
  }

  /** Line `index` of the page as the entry {@link JournalPage.decode} gives. */
  entryAt(index: number): SinkEntry {
    const page = this.#page;
    const e: SinkEntry = { seq: page.firstSeq + index, modelId: page.modelId, time: '', timeNs: page.timesNs[index]!, stream: '', log: '', fetchedAtMs: page.fetchedMs };
    readLine(index === this.index ? this.#text() : this.#textAt(index), 0, this.#head, e);
    return e;
  }

  #read(): LineFields {
    readLine(this.#text(), 0, this.#head, this.#fields);
    return this.#fields;
  }

  #text(): string {
    this.#line ??= this.#textAt(this.index);
    return this.#line;
  }

  /** Line `index` as text, without its newline. */
  #textAt(index: number): string {
    return this.bytes.toString('utf8', this.#starts[index]!, this.#starts[index + 1]! - 1);
  }

  /** Whether the run of either stream ({@link STREAM_AND_LOG} bytes) fits in [at, end) and starts with its first 12 bytes, `,"stream":"s`. */
  #streamKeyAt(at: number, end: number): boolean {
    const v = this.#view;
    return at + STREAM_AND_LOG <= end && v.getUint32(at, true) === W0 && v.getUint32(at + 4, true) === W1 && v.getUint32(at + 8, true) === W2;
  }

  /**
   * Finds the stream and the text of the line in bytes [start, end), when the line has the
   * usual shape: `{"model_id":…,"time":"…","stream":"stdout"|"stderr","log":"…"}\n`.
   */
  #scan(start: number, end: number): boolean {
    const b = this.bytes;
    const v = this.#view;
    const open = start + this.#headBytes;
    if (b[open] !== QUOTE) return false;
    // The time string usually has the previous line's length. A quote there followed by
    // `,"stream":"s` ends it: inside a JSON string every quote is escaped, so that run of
    // bytes, unescaped quotes and all, can only follow the string's closing quote.
    let at = open + 1 + this.#timeLength;
    if (!(b[at] === QUOTE && this.#streamKeyAt(at + 1, end))) {
      // A time string holds no escape: it ends at the next quote.
      for (at = open + 1; at < end && b[at] !== QUOTE; at++) if (b[at] === BACKSLASH) return false;
      this.#timeLength = at - open - 1;
      if (!this.#streamKeyAt(at + 1, end)) return false;
    }
    at++;
    // After `,"stream":"s`: the rest of the stream, then the log's key.
    const w3 = v.getUint32(at + 12, true);
    const w4 = v.getUint32(at + 16, true);
    if (w3 === OUT3 && w4 === OUT4) this.stream = 'stdout';
    else if (w3 === ERR3 && w4 === ERR4) this.stream = 'stderr';
    else return false;
    if (v.getUint32(at + 20, true) !== W5 || v.getUint16(at + 24, true) !== H6) return false;
    at += STREAM_AND_LOG;
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
