//! Group commit: pages that arrive while the journal is being synced to disk are committed
//! together, in one transaction, then synced together. A page's caller gets its result as
//! soon as its transaction is in the WAL (no crash of the process can undo it); sinks see
//! its entries once the sync that follows has made them durable (StateStore.durableSeq).
//! The main thread never waits for the disk: while one group is being synced, the next one
//! is fetched and prepared.
import type { PageCommit, PageToCommit, StateStore } from './store.js';
import { isQuietPage } from './page-commit.js';

/** What a {@link GroupCommit} reports. */
export interface GroupCommitEvents {
  /** New entries became durable: sinks may read up to `store.durableSeq()`. */
  onDurable?(): void;
  /** The journal could not be synced: nothing more can be committed (the process should restart). */
  onSyncFailure?(err: unknown): void;
}

/** Queues page commits, runs them together and syncs each group in the background. */
export class GroupCommit {
  #queue: Array<{ page: PageToCommit; resolve(c: PageCommit): void; reject(err: unknown): void }> = [];
  #scheduled = false;
  #syncing: Promise<void> | undefined;
  #failure: unknown;

  constructor(
    private readonly store: StateStore,
    private readonly events: GroupCommitEvents = {},
  ) {}

  /** Commits `page` with whatever else is queued; resolves once it is in the WAL. */
  commit(page: PageToCommit): Promise<PageCommit> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    // An empty window of a quiet model changes no row now: committed at once, without waiting
    // for a group (at 10,000 models nearly every poll is one).
    if (isQuietPage(page)) return new Promise((resolve) => resolve(this.store.commitPages([page], { sync: false })[0]!));
    return new Promise((resolve, reject) => {
      this.#queue.push({ page, resolve, reject });
      this.#schedule();
    });
  }

  /** Resolves once every commit so far is durable (or the sync failed). */
  async settled(): Promise<void> {
    while (this.#syncing || this.#scheduled) await (this.#syncing ?? new Promise((r) => setImmediate(r)));
  }

  #schedule(): void {
    if (this.#scheduled || this.#syncing) return;
    this.#scheduled = true;
    // After the I/O callbacks of this turn: every page that arrived with this one joins it.
    setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#scheduled = false;
    if (this.#syncing) return; // the sync's end flushes what queued up meanwhile
    const group = this.#queue;
    this.#queue = [];
    if (group.length === 0) return;
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
        if (this.#queue.length > 0) this.#schedule();
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
