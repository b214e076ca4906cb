//! Group commit: pages of different models that arrive in the same turn of the event loop
//! are committed in one transaction, so they share one fsync. Each caller still gets its
//! own result only once its page is durable.
import type { PageCommit, PageToCommit, StateStore } from './store.js';

/** Queues page commits and runs them together, once per turn of the event loop. */
export class GroupCommit {
  #queue: Array<{ page: PageToCommit; resolve(c: PageCommit): void; reject(err: unknown): void }> = [];
  #scheduled = false;

  constructor(private readonly store: StateStore) {}

  /** Commits `page` with whatever else is queued in this turn; resolves once it is durable. */
  commit(page: PageToCommit): Promise<PageCommit> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ page, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        // After the I/O callbacks of this turn: every page that arrived with this one joins it.
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const group = this.#queue;
    this.#queue = [];
    let results: PageCommit[];
    try {
      results = this.store.commitPages(group.map((g) => g.page));
    } catch (err) {
      for (const g of group) g.reject(err);
      return;
    }
    for (let i = 0; i < group.length; i++) group[i]!.resolve(results[i]!);
  }
}
