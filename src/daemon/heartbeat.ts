//! The daemon's one-second heartbeat: the journal and backlog gauges, and the liveness that
//! `/healthz` reports. Its timer is also what keeps the process up while the daemon runs
//! (see the constructor).
import type { Logger } from 'pino';
import type { StateStore } from '../journal/store.js';
import type { Metrics } from '../telemetry/metrics.js';
import { LogThrottle } from '../telemetry/log-throttle.js';
import { describeError } from '../errors.js';

/** How often the heartbeat runs. */
const BEAT_MS = 1_000;
/** The daemon counts as alive while its heartbeat ran within this span. */
const ALIVE_WITHIN_MS = 10_000;

/** What {@link Heartbeat} works with. */
export interface HeartbeatDeps {
  store: StateStore;
  metrics: Metrics;
  logger: Logger;
  /** Sets gauges owned elsewhere (the poll budget), once per beat. */
  moreGauges?: () => void;
}

/** The periodic work of a running daemon. */
export class Heartbeat {
  private readonly timer: NodeJS.Timeout;
  private lastBeatMs = Date.now();
  private quieted = false;
  private readonly readFailures = new LogThrottle(60_000);

  constructor(private readonly d: HeartbeatDeps) {
    // Left ref'd on purpose, unlike every other timer of the daemon: the pollers and the
    // delivery loops wait on unref'd timers and the admin server is optional, so this is the
    // handle that keeps the process up while the daemon runs. release() lets it go, last.
    this.timer = setInterval(() => this.beat(), BEAT_MS);
  }

  /** Runs the periodic work now (also at start, so the gauges are right from the first scrape). */
  beat(): void {
    if (this.quieted) return;
    this.lastBeatMs = Date.now();
    this.updateGauges();
    this.d.moreGauges?.();
  }

  /** The heartbeat ran within the last 10 seconds, and the daemon is not stopping (liveness). */
  alive(): boolean {
    return !this.quieted && Date.now() - this.lastBeatMs < ALIVE_WITHIN_MS;
  }

  /** Ends the periodic work (the daemon stops, its store is about to close); the handle stays until {@link release}. */
  quiet(): void {
    this.quieted = true;
  }

  /** Lets go of the handle: once the daemon has stopped, nothing of it holds the process. */
  release(): void {
    this.quieted = true;
    clearInterval(this.timer);
  }

  private updateGauges(): void {
    const { store, metrics } = this.d;
    try {
      const size = store.journalSize();
      metrics.journalEntries.set(size.entries);
      metrics.journalBytes.set(size.bytes);
      const last = store.lastSeq();
      const perEntry = size.entries > 0 ? size.bytes / size.entries : 0;
      for (const row of store.listSinks()) {
        const backlog = Math.min(size.entries, Math.max(0, last - row.cursor));
        metrics.backlogEntries.set({ sink: row.name }, backlog);
        metrics.backlogBytes.set({ sink: row.name }, Math.round(backlog * perEntry));
      }
    } catch (err) {
      // The gauges keep their last values; the state file's own trouble is reported by the loops that write it.
      const say = this.readFailures.take(Date.now());
      if (say) this.d.logger.warn({ err: describeError(err), ...say }, 'could not read the journal size for the gauges');
    }
  }
}
