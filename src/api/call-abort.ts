//! The abort of one call to the service (its attempts and the waits between them). The
//! request in flight watches it through one slot, not through a listener on an AbortSignal:
//! with Node's EventTarget, a listener per request (added and removed, or left on a signal of
//! the call) made the request's whole object graph (undici's request, the response headers,
//! the body's views) outlive the next minor collections, about 2 KB promoted to the old
//! generation per request. At a thousand requests a second that was most of what the daemon
//! promoted, and a full collection every few seconds.

/** Told when the call it watches is aborted. */
export interface AbortWatcher {
  handleEvent(): void;
}

/** What a request needs of its call's abort. */
export interface AbortWatch {
  readonly aborted: boolean;
  readonly reason: unknown;
  /** `watcher` (the request in flight) is told of an abort from now on; one at a time. */
  watch(watcher: AbortWatcher): void;
  /** `watcher` no longer needs telling (it ended). */
  unwatch(watcher: AbortWatcher): void;
}

/** The abort of one call: aborted by the call's deadline or by its caller. */
export class CallAbort implements AbortWatch {
  #aborted = false;
  #reason: unknown;
  #watcher: AbortWatcher | undefined;
  #controller: AbortController | undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  /** The abort as an AbortSignal, made when first asked for (a retry's wait uses it; a request does not). */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Aborts the call (once): the request in flight is told, then the signal aborts. */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    const watcher = this.#watcher;
    this.#watcher = undefined;
    watcher?.handleEvent();
    this.#controller?.abort(reason);
  }

  watch(watcher: AbortWatcher): void {
    this.#watcher = watcher;
  }

  unwatch(watcher: AbortWatcher): void {
    if (this.#watcher === watcher) this.#watcher = undefined;
  }
}
