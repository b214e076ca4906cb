//! Group commit: pages that arrive while the journal is being synced to disk are committed
//! together, in one transaction, then synced together. A page's caller gets its result as
//! soon as its transaction is in the WAL (no crash of the process can undo it); sinks see
//! its entries once the sync that follows has made them durable (StateStore.durableSeq).
//! The main thread never waits for the disk: while one group is being synced, the next one
//! is fetched and prepared. A page that ends its window waits for company up to
//! {@link GROUP_GATHER_MS} after the previous group (its poller has nothing more to fetch,
//! and with a hundred busy models each poll's page was a transaction of its own). A page with
//! more to fetch goes at once, and takes whatever waits with it; so does the page of a model
//! that was in the previous group (it is catching up, window after window).
import type { PageCommit, PageToCommit, StateStore } from './store.js';
import { isQuietPage } from './page-commit.js';

/** What a {@link GroupCommit} reports. */
export interface GroupCommitEvents {
  /** New entries became durable: sinks may read up to `store.durableSeq()`. */
  onDurable?(): void;
  /** The journal could not be synced: nothing more can be committed (the process should restart). */
  onSyncFailure?(err: unknown): void;
}

/** Longest wait of a page that ends its window, counted from the previous group (ms). */
export const GROUP_GATHER_MS = 20;

/** Queues page commits, runs them together and syncs each group in the background. */
export class GroupCommit {
  #queue: Array<{ page: PageToCommit; resolve(c: PageCommit): void; reject(err: unknown): void }> = [];
  /** How the next flush is scheduled: in this turn's check phase, or by a timer (gathering). */
  #scheduled: 'now' | 'gather' | undefined;
  #gatherTimer: NodeJS.Timeout | undefined;
  #lastFlushAt = Number.NEGATIVE_INFINITY;
  /** The models of the previous group. */
  #lastModels: string[] = [];
  #syncing: Promise<void> | undefined;
  #failure: unknown;
  readonly #gatherMs: number;

  /** `gatherMs`: how long a page that ends its window may wait after the previous group (default {@link GROUP_GATHER_MS}). */
  constructor(
    private readonly store: StateStore,
    private readonly events: GroupCommitEvents = {},
    options: { gatherMs?: number } = {},
  ) {
    this.#gatherMs = options.gatherMs ?? GROUP_GATHER_MS;
  }

  /** Commits `page` with whatever else is queued; resolves once it is in the WAL. */
  commit(page: PageToCommit): Promise<PageCommit> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    // An empty window of a quiet model changes no row now: committed at once, without waiting
    // for a group (at 10,000 models nearly every poll is one).
    if (isQuietPage(page)) {
      try {
        return Promise.resolve(this.store.commitPages([page], { sync: false })[0]!);
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({ page, resolve, reject });
      this.#schedule(this.#urgent(page));
    });
  }

  /** Resolves once every commit so far is durable (or the sync failed). */
  async settled(): Promise<void> {
    while (this.#syncing || this.#scheduled) await (this.#syncing ?? new Promise((r) => setImmediate(r)));
  }

  /** Schedules a flush of the queue: `urgent` for a page whose poller waits for it to fetch the next one. */
  #schedule(urgent: boolean): void {
    if (this.#syncing || this.#scheduled === 'now') return; // the sync's end, or this turn's flush, takes the page
    const waitMs = urgent ? 0 : this.#lastFlushAt + this.#gatherMs - performance.now();
    if (waitMs <= 0) {
      if (this.#gatherTimer) clearTimeout(this.#gatherTimer);
      this.#gatherTimer = undefined;
      this.#scheduled = 'now';
      // After the I/O callbacks of this turn: every page that arrived with this one joins it.
      setImmediate(() => this.#flush());
    } else if (this.#scheduled === undefined) {
      this.#scheduled = 'gather';
      this.#gatherTimer = setTimeout(() => {
        this.#gatherTimer = undefined;
        this.#flush();
      }, Math.ceil(waitMs));
    }
  }

  /** Whether a page's poller waits for it: it has more to fetch, or its model was in the previous group. */
  #urgent(page: PageToCommit): boolean {
    return !('end' in page.next) || this.#lastModels.includes(page.modelId);
  }

  /** Reschedules what queued up while a group was being synced. */
  #scheduleQueued(): void {
    if (this.#queue.length > 0) this.#schedule(this.#queue.some((q) => this.#urgent(q.page)));
  }

  #flush(): void {
    this.#scheduled = undefined;
    if (this.#syncing) return; // the sync's end flushes what queued up meanwhile
    const group = this.#queue;
    this.#queue = [];
    if (group.length === 0) return;
    this.#lastFlushAt = performance.now();
    this.#lastModels = group.map((g) => g.page.modelId);
    let results: PageCommit[];
    try {
      results = this.store.commitPages(
        group.map((g) => g.page),
        { sync: false },
      );
    } catch (err) {
      for (const g of group) g.reject(err);
      return;
    }
    for (let i = 0; i < group.length; i++) group[i]!.resolve(results[i]!);
    if (this.store.durableSeq() < this.store.lastSeq()) this.#sync();
  }

  #sync(): void {
    this.#syncing = this.store.syncJournal().then(
      () => {
        this.#syncing = undefined;
        this.events.onDurable?.();
        this.#scheduleQueued();
      },
      (err: unknown) => {
        this.#syncing = undefined;
        this.#failure = err;
        const queued = this.#queue;
        this.#queue = [];
        for (const g of queued) g.reject(err);
        this.events.onSyncFailure?.(err);
      },
    );
  }
}
