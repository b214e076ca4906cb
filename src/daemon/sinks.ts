//! The daemon's running sinks, each with its delivery loop: started from the config (and
//! their healthchecks run without waiting for them), changed or removed at a reload, told
//! when entries are durable, retired at shutdown.
import type { Logger } from 'pino';
import type { SinkConfig } from '../config/index.js';
import type { StateStore } from '../journal/store.js';
import { SinkDelivery } from '../delivery/sink-delivery.js';
import { retireSink } from '../delivery/retire.js';
import { logHealthcheck } from '../delivery/healthcheck.js';
import { sinkRegistry, type SinkEnvironment } from '../sinks/registry.js';
import type { Sink } from '../sinks/contract.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { Clock } from '../time/clock.js';
import { deliverySettings } from './wiring.js';
import { sinkUnchanged } from './reload.js';
import type { ProcessingConfig } from '../config/processing.js';
import { sinkProcessing } from '../delivery/processing/compile.js';
import type { ModelProgress, RecordMeter } from '../delivery/processing/stage.js';
import type { TapHub } from '../delivery/tap.js';

/** What {@link RunningSinks} works with. */
export interface RunningSinksDeps {
  store: StateStore;
  metrics: Metrics;
  logger: Logger;
  clock: Clock;
  /** Called after each acknowledgement of any sink. */
  onAck(): void;
  /** What sinks may need from the rest of the config now in force. */
  environment(): SinkEnvironment;
  /** The `processing` section now in force. */
  processing(): ProcessingConfig;
  /** Where each model stands (its checkpoint, its last journaled entry, whether it moves). */
  progress: ModelProgress;
  /** Counts each model's records once. */
  meter: RecordMeter;
  /** Counts each batch and shows it to `mls tap`. */
  tap: TapHub;
}

interface RunningSink {
  config: SinkConfig;
  sink: Sink;
  delivery: SinkDelivery;
}

/** The sinks of a running daemon, by name. */
export class RunningSinks {
  private readonly sinks = new Map<string, RunningSink>();

  constructor(private readonly d: RunningSinksDeps) {}

  /** Starts every sink of the config, first forgetting the cursors of sinks no longer in it. */
  async startAll(configs: readonly SinkConfig[]): Promise<void> {
    const removed = this.d.store.removeSinksExcept(configs.map((s) => s.name));
    if (removed.length > 0) this.d.logger.warn({ sinks: removed }, 'forgot the cursors of sinks no longer configured');
    for (const sc of configs) await this.start(sc);
  }

  /**
   * Applies the sinks of a reloaded config: a sink removed or changed is retired (within its
   * bound), a removed one's cursor forgotten, a new or changed one started.
   */
  async apply(next: readonly SinkConfig[], processingChanged = false): Promise<void> {
    const { store, logger } = this.d;
    const wanted = new Map(next.map((s) => [s.name, s]));
    for (const [name, running] of [...this.sinks]) {
      const sc = wanted.get(name);
      if (sc && sinkUnchanged(running.config, sc) && !processingChanged) continue;
      await retireSink({ name, sink: running.sink, delivery: running.delivery }, sinkRegistry.stepBoundMs(running.config), logger);
      this.sinks.delete(name);
      if (!sc) {
        store.removeSinksExcept(next.map((s) => s.name));
        logger.info({ sink: name }, 'reload: sink removed');
      }
    }
    for (const sc of next) {
      if (this.sinks.has(sc.name)) continue;
      await this.start(sc);
      logger.info({ sink: sc.name }, 'reload: sink started');
    }
  }

  /** Entries are durable in the journal: the loops may read them. */
  notify(): void {
    for (const s of this.sinks.values()) s.delivery.notify();
  }

  /** A window was fetched to its end: send what is there without waiting for max_delay. */
  flushSoon(): void {
    for (const s of this.sinks.values()) s.delivery.flushSoon();
  }

  /** Shutdown: send partial batches at once. */
  drain(): void {
    for (const s of this.sinks.values()) s.delivery.drain();
  }

  /** Each sink's last error, since when it has been failing, and what it is sending now, for the status. */
  health(): { errors: Map<string, string | undefined>; failingSince: Map<string, number | undefined>; sending: Map<string, { inFlightEntries: number; retries: number }> } {
    const all = [...this.sinks];
    return {
      errors: new Map(all.map(([n, s]) => [n, s.delivery.lastError?.message])),
      failingSince: new Map(all.map(([n, s]) => [n, s.delivery.failingSinceMs])),
      sending: new Map(all.map(([n, s]) => [n, { inFlightEntries: s.delivery.inFlightEntries, retries: s.delivery.attempts }])),
    };
  }

  /** Stops every delivery loop, then flushes and closes every sink, each step within its bound and `capMs`. */
  async retireAll(capMs: number): Promise<void> {
    await Promise.all([...this.sinks].map(([name, s]) => retireSink({ name, sink: s.sink, delivery: s.delivery }, sinkRegistry.stepBoundMs(s.config), this.d.logger, capMs)));
  }

  private processingOf(sc: SinkConfig) {
    const compiled = sinkProcessing(this.d.processing(), sc);
    return compiled && { ...compiled, progress: this.d.progress, meter: this.d.meter };
  }

  /** Builds the sink, starts its delivery loop, and runs its healthcheck without waiting for it. */
  private async start(sc: SinkConfig): Promise<void> {
    const { store, metrics, clock } = this.d;
    const row = store.ensureSink(sc.name);
    metrics.initSink(sc.name);
    const log = this.d.logger.child({ component: 'sink', sink: sc.name });
    const sink = await sinkRegistry.build(sc, {
      name: sc.name,
      state: row.state,
      now: () => clock.now(),
      logger: log,
      commitState: (state: string) => store.setSinkState(sc.name, state),
      unknownBytes: (bytes) => metrics.fileUnknownBytes.inc({ sink: sc.name }, bytes),
    }, this.d.environment());
    const delivery = new SinkDelivery({
      name: sc.name,
      sink,
      store,
      metrics,
      logger: log,
      now: () => clock.now(),
      onAck: () => this.d.onAck(),
      settings: deliverySettings(sc),
      processing: this.processingOf(sc),
      tap: this.d.tap,
    });
    this.sinks.set(sc.name, { config: sc, sink, delivery });
    void delivery.start();
    void logHealthcheck(sc.name, sink, log);
  }
}
