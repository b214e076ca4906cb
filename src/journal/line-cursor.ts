//! The lines of a page slice read one after the other, without an object per line: a reader
//! that needs only the stream and the text of most lines (processing) asks for the whole
//! entry of the few it keeps as objects.
import type { SinkEntry } from '../records/entry.js';
import { journalHead, readLine, readLineAt, type LineFields } from './line-read.js';
import type { JournalPage } from './pages.js';

/** Any character a Latin-1 reading of UTF-8 gets wrong. */
const NON_ASCII = /[^\x00-\x7f]/g;

/**
 * Text read at once: a page's text (150 KB for 1,000 lines) would go to the large-object space
 * and live until a full collection; pieces of this size die young.
 */
const WINDOW_BYTES = 32 * 1024;

/**
 * A cursor over lines [from, to) of a page; {@link next} moves to the first. The page is read
 * as Latin-1 (a one-byte string, a character per byte, read at twice the speed of UTF-8), a
 * window of lines at a time, and the few lines holding other than ASCII again as UTF-8.
 */
export class PageLineCursor {
  /** The current line's index in the page. */
  index: number;
  /** Its exact time (ns since the epoch), stream and text. */
  timeNs = 0n;
  stream = '';
  log = '';
  readonly #page: JournalPage;
  readonly #to: number;
  readonly #starts: Int32Array;
  /** The text of lines [index of its first line, #windowEnd), from byte #base of the page. */
  #text = '';
  #base = 0;
  #windowEnd: number;
  readonly #head: number;
  /** Where the current line and the next one start in the text. */
  #pos = 0;
  #next = 0;
  /** The current line read as UTF-8, when it holds other than ASCII. */
  #utf8: string | undefined;
  /** The first character other than ASCII at or after #nonAsciiFrom (-1: none). */
  #nonAscii = -1;
  #nonAsciiFrom = -1;
  readonly #fields: LineFields = { time: '', stream: '', log: '' };

  constructor(page: JournalPage, from: number, to: number) {
    this.#page = page;
    this.index = from - 1;
    this.#to = to;
    this.#starts = page.starts();
    this.#windowEnd = from;
    this.#head = journalHead(page.modelId);
  }

  /** Moves to the next line; false past the last. */
  next(): boolean {
    if (this.index + 1 >= this.#to) return false;
    this.index++;
    if (this.index >= this.#windowEnd) this.#window();
    const pos = (this.#pos = this.#next);
    const f = this.#fields;
    const read = readLineAt(this.#text, pos, this.#head, f, false);
    let next = read;
    if (next < 0) {
      next = this.#text.indexOf('\n', pos) + 1;
      if (next === 0) next = this.#text.length + 1;
    }
    this.#next = next;
    this.#utf8 = undefined;
    const nonAscii = this.#nonAsciiAt(pos);
    if (nonAscii >= 0 && nonAscii < next) {
      this.#utf8 = this.#page.bytes.toString('utf8', this.#base + pos, this.#base + next - 1);
      readLine(this.#utf8, 0, this.#head, f);
    } else if (read < 0) readLine(this.#text, pos, this.#head, f);
    this.timeNs = this.#page.timesNs[this.index]!;
    this.stream = f.stream;
    this.log = f.log;
    return true;
  }

  /** The current line as the entry {@link JournalPage.decode} gives. */
  entry(): SinkEntry {
    const page = this.#page;
    const e: SinkEntry = { seq: page.firstSeq + this.index, modelId: page.modelId, time: '', timeNs: this.timeNs, stream: '', log: '', fetchedAtMs: page.fetchedMs };
    if (this.#utf8 !== undefined) readLine(this.#utf8, 0, this.#head, e);
    else readLine(this.#text, this.#pos, this.#head, e);
    return e;
  }

  /** Reads the text of the lines from the current one, up to {@link WINDOW_BYTES} (at least one line). */
  #window(): void {
    const starts = this.#starts;
    const first = this.index;
    let end = first + 1;
    while (end < this.#to && starts[end + 1]! - starts[first]! <= WINDOW_BYTES) end++;
    this.#base = starts[first]!;
    this.#text = this.#page.bytes.toString('latin1', this.#base, starts[end]);
    this.#windowEnd = end;
    this.#next = 0;
    this.#nonAsciiFrom = -1;
  }

  /** Where the first character other than ASCII at or after `from` is, or -1. */
  #nonAsciiAt(from: number): number {
    if (this.#nonAsciiFrom >= 0 && from >= this.#nonAsciiFrom && (this.#nonAscii < 0 || this.#nonAscii >= from)) return this.#nonAscii;
    NON_ASCII.lastIndex = from;
    this.#nonAscii = NON_ASCII.test(this.#text) ? NON_ASCII.lastIndex - 1 : -1;
    this.#nonAsciiFrom = from;
    return this.#nonAscii;
  }
}
