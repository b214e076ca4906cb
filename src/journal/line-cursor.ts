//! The lines of a page slice read one after the other, without an object per line: a reader
//! that needs only the stream and the text of most lines (processing) asks for the whole
//! entry of the few it keeps as objects.
import type { SinkEntry } from '../records/entry.js';
import { journalHead, readLine, readLineAt, type LineFields } from './line-read.js';
import type { JournalPage } from './pages.js';

/** A cursor over lines [from, to) of a page; {@link next} moves to the first. */
export class PageLineCursor {
  /** The current line's index in the page. */
  index: number;
  /** Its exact time (ns since the epoch), stream and text. */
  timeNs = 0n;
  stream = '';
  log = '';
  readonly #page: JournalPage;
  readonly #to: number;
  readonly #text: string;
  readonly #head: number;
  /** Where the current line and the next one start in the text. */
  #pos = 0;
  #next = 0;
  readonly #fields: LineFields = { time: '', stream: '', log: '' };

  constructor(page: JournalPage, from: number, to: number) {
    this.#page = page;
    this.index = from - 1;
    this.#to = to;
    this.#text = from === 0 && to === page.count ? page.bytes.toString('utf8') : page.lines(from, to).toString('utf8');
    this.#head = journalHead(page.modelId);
  }

  /** Moves to the next line; false past the last. */
  next(): boolean {
    if (this.index + 1 >= this.#to) return false;
    this.index++;
    this.#pos = this.#next;
    const f = this.#fields;
    let next = readLineAt(this.#text, this.#pos, this.#head, f, false);
    if (next < 0) next = readLine(this.#text, this.#pos, this.#head, f);
    this.#next = next;
    this.timeNs = this.#page.timesNs[this.index]!;
    this.stream = f.stream;
    this.log = f.log;
    return true;
  }

  /** The current line as the entry {@link JournalPage.decode} gives. */
  entry(): SinkEntry {
    const page = this.#page;
    const e: SinkEntry = { seq: page.firstSeq + this.index, modelId: page.modelId, time: '', timeNs: this.timeNs, stream: '', log: '', fetchedAtMs: page.fetchedMs };
    readLine(this.#text, this.#pos, this.#head, e);
    return e;
  }
}
