//! Journal pages read or written lately, kept decoded in memory: sinks read a page right
//! after it is committed, and one after another.
import type { JournalPage } from './pages.js';

/**
 * Recent journal pages kept in memory (bytes of NDJSON). Sinks read pages right after
 * they are committed; a sink that falls behind while pages keep coming reads them from
 * here rather than from the file, up to this much.
 */
const PAGE_CACHE_BYTES = 8 * 1024 * 1024;

/** Pages by first seq, in the order they were committed or read from the file (the oldest go first), under a budget of bytes. */
export class PageCache {
  private readonly pages = new Map<number, JournalPage>();
  /** Bytes of NDJSON held, kept under the budget. */
  private bytes = 0;

  constructor(private readonly maxBytes = PAGE_CACHE_BYTES) {}

  get(firstSeq: number): JournalPage | undefined {
    return this.pages.get(firstSeq);
  }

  /** Keeps `page` as the newest, dropping the oldest ones over the budget (never the last one). */
  remember(page: JournalPage): void {
    this.forget(page.firstSeq);
    this.pages.set(page.firstSeq, page);
    this.bytes += page.bytes.length;
    while (this.bytes > this.maxBytes && this.pages.size > 1) this.forget(this.pages.keys().next().value!);
  }

  /** Drops the pages that start at or before `seq`. */
  forgetThrough(seq: number): void {
    for (const first of [...this.pages.keys()]) if (first <= seq) this.forget(first);
  }

  private forget(firstSeq: number): void {
    const page = this.pages.get(firstSeq);
    if (!page) return;
    this.pages.delete(firstSeq);
    this.bytes -= page.bytes.length;
  }
}
