//! Taking a sink out of service (removed or changed at reload, or at shutdown): its delivery
//! loop is stopped, then the sink flushed and closed, each step within the sink's bound, so
//! a sink that hangs can delay a reload or a shutdown by its bound at most, never forever.
import type { Logger } from 'pino';
import type { Sink } from '../sinks/contract.js';
import type { SinkDelivery } from './sink-delivery.js';
import { withinOrFail } from '../time/bounded.js';
import { describeError } from '../errors.js';

/**
 * Grace beyond the sink's own bound for its delivery loop to stop: the send in flight ends
 * by the sink's timeout, then the loop needs a moment to notice.
 */
const STOP_GRACE_MS = 1_000;

/** A running sink and its delivery loop. */
export interface RetiringSink {
  name: string;
  sink: Sink;
  delivery: SinkDelivery;
}

/**
 * Stops the delivery loop, then flushes and closes the sink. Each step is bounded by
 * `boundMs` (capped at `capMs`, e.g. a share of shutdown_timeout); a step that fails or
 * passes its bound is logged and the next one runs. Never rejects.
 */
export async function retireSink(s: RetiringSink, boundMs: number, logger: Logger, capMs = Number.POSITIVE_INFINITY): Promise<void> {
  const steps: Array<[string, () => Promise<void>, number]> = [
    ['stopping the delivery loop', () => s.delivery.stop(), boundMs + STOP_GRACE_MS],
    ['flush', () => s.sink.flush(), boundMs],
    ['close', () => s.sink.close(), boundMs],
  ];
  for (const [what, fn, ms] of steps) {
    try {
      await withinOrFail(`${what} of sink ${s.name}`, fn, Math.min(ms, capMs));
    } catch (err) {
      logger.error({ sink: s.name, err: describeError(err) }, `sink ${what} did not complete`);
    }
  }
}
