//! The journal's bounds (`buffer`), between the pollers and the sinks. Before each page a
//! poller waits for room: with `when_full: block` polling pauses until the sinks catch up
//! (a page in flight still commits); with `drop_oldest` the oldest entries not yet delivered
//! are dropped, counted per sink and logged at error level. Acknowledgements trim the
//! journal and wake the pollers that wait.
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { StateStore } from '../journal/store.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { Clock } from '../time/clock.js';
import { describeError } from '../errors.js';

/** What {@link Backpressure} works with. */
export interface BackpressureDeps {
  store: StateStore;
  metrics: Metrics;
  logger: Logger;
  clock: Clock;
  /** The bounds now in force (a reload may change them). */
  buffer(): Config['buffer'];
}

/** Lines about dropped entries: at most one per sink this often, with the count since the last. */
const DROP_LOG_INTERVAL_MS = 10_000;
/** Trim the journal at most this often while no poller waits for room. */
const TRIM_INTERVAL_MS = 500;
/** A waiting poller looks at the journal again at least this often. */
const RECHECK_MS = 1_000;

/** Keeps the journal within its bounds. */
export class Backpressure {
  private fullSince: number | undefined;
  private readonly droppedSinceLog = new Map<string, number>();
  private lastDropLogMs = Number.NEGATIVE_INFINITY;
  private lastTrimMs = 0;
  private readonly roomWaiters = new Set<() => void>();

  constructor(private readonly d: BackpressureDeps) {}

  /** Whether polling is paused by a full journal (`when_full: block`): no checkpoint moves until sinks catch up. */
  get blocked(): boolean {
    return this.fullSince !== undefined;
  }

  /**
   * Undefined when the journal has room for another page now (nearly always: no promise for
   * each of a thousand polls a second); else resolves when it has (or `signal` aborts).
   */
  waitForRoom(signal: AbortSignal): Promise<void> | undefined {
    if (this.fullSince === undefined && this.overBounds() === undefined) return undefined;
    return this.untilRoom(signal);
  }

  private async untilRoom(signal: AbortSignal): Promise<void> {
    const { metrics, logger, clock } = this.d;
    for (;;) {
      const over = this.overBounds();
      if (!over) {
        if (this.fullSince !== undefined) {
          logger.info({ pausedMs: clock.now() - this.fullSince }, 'journal has room again; polling resumes');
          this.fullSince = undefined;
          metrics.journalFull.set(0);
        }
        return;
      }
      const buffer = this.d.buffer();
      if (buffer.when_full === 'drop_oldest') {
        this.dropOldest(over, buffer.max_entries);
        return;
      }
      if (this.fullSince === undefined) {
        this.fullSince = clock.now();
        metrics.journalFull.set(1);
        logger.warn({ ...this.d.store.journalSize(), max_entries: buffer.max_entries, max_bytes: buffer.max_bytes }, 'journal full: polling paused until sinks catch up (buffer.when_full: block)');
      }
      if (signal.aborted) return;
      await this.roomOrRecheck(signal);
    }
  }

  /** A sink acknowledged a batch: trims the journal now and then, and at once while a poller waits. */
  afterAck(): void {
    const now = this.d.clock.now();
    if (now - this.lastTrimMs < TRIM_INTERVAL_MS && this.roomWaiters.size === 0) return;
    this.lastTrimMs = now;
    try {
      this.d.store.trimJournal();
    } catch (err) {
      this.d.logger.warn({ err: describeError(err) }, 'could not trim the journal; will try again');
    }
    for (const w of [...this.roomWaiters]) w();
  }

  private overBounds(): { entries: number; bytes: number } | undefined {
    const size = this.d.store.journalSize();
    const { max_entries, max_bytes } = this.d.buffer();
    if (size.entries < max_entries && size.bytes < max_bytes) return undefined;
    return { entries: Math.max(0, size.entries - max_entries), bytes: Math.max(0, size.bytes - max_bytes) };
  }

  private dropOldest(over: { entries: number; bytes: number }, maxEntries: number): void {
    const { store, metrics, logger, clock } = this.d;
    const slack = Math.ceil(maxEntries * 0.05);
    const dropped = store.dropOldest(over.entries + slack, over.bytes);
    const now = clock.now();
    for (const [sink, n] of dropped) {
      metrics.dropped.inc({ sink }, n);
      this.droppedSinceLog.set(sink, (this.droppedSinceLog.get(sink) ?? 0) + n);
    }
    // ERROR: data was lost. Once per interval with the count since the last line, not once per page.
    if (this.droppedSinceLog.size > 0 && now - this.lastDropLogMs >= DROP_LOG_INTERVAL_MS) {
      this.lastDropLogMs = now;
      for (const [sink, n] of this.droppedSinceLog) {
        logger.error({ sink, dropped: n }, 'journal full: dropped the oldest entries not yet delivered by this sink (buffer.when_full: drop_oldest)');
      }
      this.droppedSinceLog.clear();
    }
  }

  /** Waits for the next acknowledgement, `signal`, or the recheck timer, whichever comes first. */
  private roomOrRecheck(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        this.roomWaiters.delete(done);
        signal.removeEventListener('abort', done);
        clearTimeout(t);
        resolve();
      };
      const t = setTimeout(done, RECHECK_MS);
      t.unref();
      this.roomWaiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
