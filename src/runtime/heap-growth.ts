//! How much V8 lets the heap grow between full collections, by load.
//!
//! V8 sets the old generation's limit at a multiple of the live heap, a multiple it picks
//! from its own speed measurements and that stays low (about 1.5) for a heap as small as
//! the daemon's, about 20 MB live. While pages stream through, every buffer of a page in
//! flight (response body, journal lines: about half a megabyte per 1,000 entries) counts
//! towards that limit once it outlives a scavenge, so the limit was reached every few
//! pages: 36 full mark-compacts for 600,000 entries, and about 1.5 times the CPU of the
//! same run with the factor below.
//!
//! So while entries arrive fast, the daemon asks V8 for a fixed growing factor of 2.5
//! (`--heap-growing-percent=150`: 11 mark-compacts for the same entries), and gives the
//! choice back to V8 after a quiet spell. An idle daemon or a slow trickle keeps V8's own,
//! tighter sizing. A `--heap-growing-percent` given to Node.js by the operator wins: the
//! daemon then leaves the setting alone.
import { setFlagsFromString } from 'node:v8';

/** Options of {@link HeapGrowth}; the defaults are the daemon's. */
export interface HeapGrowthOptions {
  /** Entries per second from which the heap may grow more. Default 20,000. */
  busyEntriesPerSec?: number;
  /** V8's `--heap-growing-percent` while busy. Default 150 (a factor of 2.5). */
  busyPercent?: number;
  /** Seconds below the rate before V8 sizes the heap itself again. Default 10. */
  quietSeconds?: number;
  /** Applies a V8 flag; `v8.setFlagsFromString` by default. */
  setFlags?: (flags: string) => void;
  /** The Node.js flags the process was started with; by default `process.execArgv` and `NODE_OPTIONS`. */
  nodeFlags?: readonly string[];
  /** Milliseconds of a monotonic clock; `performance.now` by default. */
  now?: () => number;
  /** Told of each switch (the daemon logs it at debug level). */
  onSwitch?: (busy: boolean, flag: string) => void;
}

/** Tracks the entry rate and switches V8's heap growing factor with it. */
export class HeapGrowth {
  readonly #busyPerSec: number;
  readonly #busyFlag: string;
  readonly #quietSeconds: number;
  readonly #setFlags: (flags: string) => void;
  readonly #now: () => number;
  readonly #onSwitch: ((busy: boolean, flag: string) => void) | undefined;
  /** False when the operator set the factor. */
  readonly enabled: boolean;
  #entries = 0;
  #quietFor = 0;
  #busy = false;
  #lastTickMs: number | undefined;

  constructor(options: HeapGrowthOptions = {}) {
    this.#busyPerSec = options.busyEntriesPerSec ?? 20_000;
    this.#busyFlag = `--heap-growing-percent=${options.busyPercent ?? 150}`;
    this.#quietSeconds = options.quietSeconds ?? 10;
    this.#setFlags = options.setFlags ?? setFlagsFromString;
    this.#now = options.now ?? (() => performance.now());
    this.#onSwitch = options.onSwitch;
    const flags = options.nodeFlags ?? [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
    this.enabled = !flags.some((f) => /^--heap[-_]growing[-_]percent\b/.test(f));
  }

  /** Whether the larger factor is in force. */
  get busy(): boolean {
    return this.#busy;
  }

  /**
   * Counts entries that came in (fetched, before the dedupe). When the rate since the
   * last tick (over at least a second) already reaches the threshold, switches at once
   * rather than at the next tick.
   */
  noteEntries(n: number): void {
    this.#entries += n;
    if (this.#busy || !this.enabled || this.#lastTickMs === undefined || this.#entries < this.#busyPerSec) return;
    const seconds = Math.max(1, (this.#now() - this.#lastTickMs) / 1000);
    if (this.#entries / seconds >= this.#busyPerSec) this.#switch(true);
  }

  /**
   * Called about once a second: compares the rate since the last call with the threshold
   * and switches the factor when needed.
   */
  tick(): void {
    const nowMs = this.#now();
    const last = this.#lastTickMs;
    this.#lastTickMs = nowMs;
    const entries = this.#entries;
    this.#entries = 0;
    if (!this.enabled || last === undefined || nowMs <= last) return;
    const seconds = (nowMs - last) / 1000;
    if (entries / seconds >= this.#busyPerSec) {
      this.#quietFor = 0;
      if (!this.#busy) this.#switch(true);
    } else if (this.#busy) {
      this.#quietFor += seconds;
      if (this.#quietFor >= this.#quietSeconds) this.#switch(false);
    }
  }

  /** Gives the sizing back to V8 (at shutdown, or when the daemon stops polling). */
  reset(): void {
    if (this.#busy) this.#switch(false);
    this.#entries = 0;
    this.#lastTickMs = undefined;
  }

  #switch(busy: boolean): void {
    const flag = busy ? this.#busyFlag : '--heap-growing-percent=0';
    this.#setFlags(flag);
    this.#busy = busy;
    this.#quietFor = 0;
    this.#onSwitch?.(busy, flag);
  }
}
