//! The page commit: a fetched page's new entries (by occurrence counts), the dedupe counts
//! and the checkpoint move together in one transaction, so the checkpoint never moves
//! ahead of the entries. Pages of several models that arrive together share it.
import type { Checkpoint } from './checkpoint-reads.js';
import type { Checkpoints, PageContinuation, WindowStart } from './checkpoints.js';
import type { StateDb, Tx } from './db.js';
import type { DedupeCounts } from './dedupe-counts.js';
import type { JournalEntries } from './entries.js';
import type { JournalPage } from './pages.js';
import { EntryObjectsPage, type PreparedEntry, type PreparedPage } from './prepared.js';
import { INVALID_REASONS, type InvalidReason } from '../records/off-spec.js';

/** A page to commit: the arguments of {@link StateStore.commitPage}. */
export interface PageToCommit {
  modelId: string;
  fetchId: number;
  windowFromMs: number;
  entries: PreparedPage | readonly PreparedEntry[];
  next: PageContinuation;
  fetchedMs: number;
  begin?: WindowStart | undefined;
}

/**
 * Whether a page only ends an empty window it began: it changes no row now, the
 * checkpoints write such windows together later ({@link Checkpoints.deferQuiet}).
 */
export function isQuietPage(p: PageToCommit): boolean {
  return p.entries.length === 0 && p.begin !== undefined && 'end' in p.next;
}

/** Result of committing one page. */
export interface PageCommit {
  appended: number;
  /** Exact times of the entries appended (ns), in page order; absent when none. */
  newTimesNs?: BigInt64Array | undefined;
  duplicates: number;
  firstSeq: number | undefined;
  lastSeq: number | undefined;
  /** The off-spec entries appended, per reason; absent when none. */
  invalid?: Partial<Record<InvalidReason, number>> | undefined;
}

/** A page inside {@link PageCommitter.commitPages}: what its transaction produced. */
interface PendingPage {
  p: PageToCommit;
  result: PageCommit;
  unwritten: Checkpoint | undefined;
  page: JournalPage | undefined;
  /** Set when the page brought nothing new and is written later, as an empty window is. */
  deferred: boolean;
}

/** Commits pages into the checkpoints, the dedupe counts and the journal. */
export class PageCommitter {
  private readonly tx: Tx<[work: readonly PendingPage[]], number>;

  constructor(
    private readonly state: StateDb,
    private readonly checkpoints: Checkpoints,
    private readonly dedupe: DedupeCounts,
    private readonly entries: JournalEntries,
  ) {
    this.tx = state.db.transaction((work: readonly PendingPage[]) => {
      let lastSeq = this.state.lastSeq;
      for (const w of work) lastSeq = this.applyPage(w, lastSeq);
      return lastSeq;
    });
  }

  /** See {@link StateStore.commitPages}. */
  commitPages(pages: readonly PageToCommit[], sync: boolean): PageCommit[] {
    this.state.assertWritable(); // before anything changes, the deferred windows included
    const results: PageCommit[] = pages.map(() => ({ appended: 0, duplicates: 0, firstSeq: undefined, lastSeq: undefined }));
    const work: PendingPage[] = [];
    for (let i = 0; i < pages.length; i++) {
      const p = pages[i]!;
      if (isQuietPage(p)) this.checkpoints.deferQuiet(p.modelId, p.begin!, p.fetchId);
      else work.push({ p, result: results[i]!, unwritten: this.checkpoints.unwritten(p.modelId), page: undefined, deferred: false });
    }
    if (work.length === 0) return results;
    // The caller syncs later (syncJournal), or the pages are empty: an empty page only moves
    // the token or the watermark, and if power loss undid it the window would just be read
    // again. Such commits skip the fsync (polling idle models would otherwise cost one fsync
    // per request); a later synced commit syncs them too.
    const unsynced = !sync || work.every((w) => w.p.entries.length === 0);
    const lastSeq = unsynced ? this.state.unsynced(this.tx, work) : this.tx.immediate(work);
    // Only now: if the commit failed, the cached checkpoints (and quiet ones' unwritten state) still hold.
    for (const w of work) {
      if (w.deferred) {
        this.checkpoints.deferQuiet(w.p.modelId, w.p.begin!, w.p.fetchId);
        continue;
      }
      this.checkpoints.committed(w.p.modelId);
      // Sinks read a page right after it is committed: keep it.
      if (w.page) this.entries.appended(w.page);
    }
    this.state.advance(lastSeq, !unsynced);
    return results;
  }

  /** Writes one page inside the caller's transaction; returns the last seq given out. */
  private applyPage(w: PendingPage, lastSeq: number): number {
    const { modelId, fetchId, windowFromMs, entries, next, fetchedMs, begin } = w.p;
    const { result } = w;
    const page = Array.isArray(entries) ? new EntryObjectsPage(entries as readonly PreparedEntry[]) : (entries as PreparedPage);
    const counted = this.dedupe.count(modelId, fetchId, page);
    result.duplicates = counted.duplicates;
    if (counted.n === 0 && begin && 'end' in next && changesOnlyTheWindow(this.checkpoints.get(modelId), windowFromMs, page, counted.latest)) {
      w.deferred = true;
      return lastSeq;
    }
    const windowEndMs = counted.earliestBucketMs < windowFromMs ? (this.checkpoints.windowEndMs(modelId, begin) ?? windowFromMs) : windowFromMs;
    this.dedupe.write(modelId, counted, windowFromMs, windowEndMs);
    const { n } = counted;
    if (n > 0) {
      const first = lastSeq + 1;
      inTimeOrder(counted.kept, counted.times, n);
      const lines = page.render(modelId, counted.kept, n);
      w.page = this.entries.appendPage(first, modelId, fetchedMs, lines, counted.times.subarray(0, n));
      result.firstSeq = first;
      result.lastSeq = first + n - 1;
      result.appended = n;
      result.newTimesNs = counted.times.subarray(0, n);
      if (page.invalid) result.invalid = invalidKept(page.invalid, counted.kept, n);
      lastSeq = first + n - 1;
    }
    this.checkpoints.writePage(modelId, fetchId, w.unwritten, begin, next, counted.latest >= 0 ? page.timesNs[counted.latest] : undefined);
    return lastSeq;
  }
}

/**
 * Whether a window fetched in one page whose entries were all delivered before changes
 * nothing but what an empty window changes: its entries lie inside the window (a bucket
 * the service filled from before the window must record that it came back, see
 * {@link DedupeCounts.write}) and none is newer than the checkpoint's newest entry. The
 * buckets' running counts then matter to no later fetch (each fetch counts afresh), so the
 * page is written as an empty window is, later and with others ({@link Checkpoints.deferQuiet}):
 * with models re-reading their recent windows, a third of the pages with entries are such.
 */
function changesOnlyTheWindow(checkpoint: Checkpoint | undefined, windowFromMs: number, page: PreparedPage, latest: number): boolean {
  const { timesNs } = page;
  const newest = checkpoint?.lastEntryNs;
  if (newest === undefined || latest < 0 || timesNs[latest]! > newest) return false;
  const fromNs = BigInt(Math.floor(windowFromMs)) * 1_000_000n;
  for (let i = 0; i < page.length; i++) if (timesNs[i]! < fromNs) return false;
  return true;
}

/** The reasons of the off-spec entries among `kept[0..n)`, counted; `undefined` when there is none. */
function invalidKept(codes: Uint8Array, kept: Uint32Array, n: number): Partial<Record<InvalidReason, number>> | undefined {
  let out: Partial<Record<InvalidReason, number>> | undefined;
  for (let k = 0; k < n; k++) {
    const code = codes[kept[k]!]!;
    if (code === 0) continue;
    const reason = INVALID_REASONS[code - 1]!;
    (out ??= {})[reason] = (out[reason] ?? 0) + 1;
  }
  return out;
}

/**
 * Puts the first `n` kept entries in time order (equal times in page order), so a journal
 * row, and any part of it a batch takes, is in time order whatever order the service sent:
 * multiline grouping reads lines in time order. A page already in order (the usual case)
 * costs one pass.
 */
export function inTimeOrder(kept: Uint32Array, times: BigInt64Array, n: number): void {
  let sorted = true;
  for (let k = 1; k < n && sorted; k++) sorted = times[k - 1]! <= times[k]!;
  if (sorted) return;
  const order = Array.from({ length: n }, (_, k) => k);
  order.sort((a, b) => (times[a]! < times[b]! ? -1 : times[a]! > times[b]! ? 1 : a - b));
  const k0 = kept.slice(0, n);
  const t0 = times.slice(0, n);
  for (let k = 0; k < n; k++) {
    kept[k] = k0[order[k]!]!;
    times[k] = t0[order[k]!]!;
  }
}
