//! A sink's `healthcheck()`, bounded and never failing: its answer is informational (a
//! failing check stops nothing: delivery retries as it always does), so a check that
//! throws, answers something else than `{ ok, detail? }` or takes too long is itself a
//! failing check with a detail saying so.
import type { Logger } from 'pino';
import type { Sink } from '../sinks/contract.js';
import { describeError } from '../errors.js';
import { formatDuration } from '../time/duration.js';
import { TIMED_OUT, within } from '../time/bounded.js';

/** How long the daemon waits for a sink's healthcheck (a TCP connect or a look at a folder). */
export const HEALTHCHECK_BOUND_MS = 5_000;

/** What a healthcheck said. */
export interface HealthcheckResult {
  ok: boolean;
  /** What the sink said, or why there is no answer. */
  detail: string | undefined;
}

/** Runs `sink.healthcheck()` within `boundMs`; never rejects. */
export async function boundedHealthcheck(sink: Sink, boundMs: number = HEALTHCHECK_BOUND_MS): Promise<HealthcheckResult> {
  let answer: unknown;
  try {
    answer = await within(() => sink.healthcheck(), boundMs);
  } catch (err) {
    return { ok: false, detail: `the healthcheck threw: ${describeError(err)}` };
  }
  if (answer === TIMED_OUT) return { ok: false, detail: `no answer within ${formatDuration(boundMs)}` };
  const { ok, detail } = (answer ?? {}) as { ok?: unknown; detail?: unknown };
  if (typeof ok !== 'boolean') return { ok: false, detail: 'the healthcheck answered without a boolean `ok`' };
  return { ok, detail: typeof detail === 'string' ? detail : undefined };
}

/** Logs what sink `name`'s healthcheck says: info when it passes, a warning with its detail when it does not. */
export async function logHealthcheck(name: string, sink: Sink, logger: Logger, boundMs?: number): Promise<void> {
  const { ok, detail } = await boundedHealthcheck(sink, boundMs);
  if (ok) logger.info({ sink: name, detail }, 'sink healthcheck passed');
  else logger.warn({ sink: name, error: detail }, 'sink healthcheck failed; delivery goes on and retries until the sink answers');
}
