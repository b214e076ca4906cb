//! Waiting: exponential backoff with full jitter, jittered intervals and abortable sleeps.
//! The one home of these rules for the service client, the poll loops and the delivery loops.
import { setTimeout as delay } from 'node:timers/promises';

/** Backoff parameters. */
export interface BackoffPolicy {
  /** Ceiling of the first delay; doubles on each retry. */
  baseDelayMs: number;
  /** Largest ceiling any delay may have. */
  maxDelayMs: number;
}

/** The ceiling of the delay before retry number `attempt`: `min(max, base·2^attempt)`. */
export function backoffCeiling(attempt: number, policy: BackoffPolicy): number {
  // 2^attempt overflows to Infinity for large attempts, which min() handles.
  return Math.max(0, Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt));
}

/**
 * Full jitter: a whole number of milliseconds drawn uniformly from `[0, ceiling]` (rounded),
 * so that many clients failing together do not retry together.
 */
export function fullJitterDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  return Math.round(random() * backoffCeiling(attempt, policy));
}

/** {@link fullJitterDelay} with the policy as two numbers: a delay in `[0, min(max, base·2^attempt)]`. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  return fullJitterDelay(attempt, { baseDelayMs: baseMs, maxDelayMs: maxMs }, random);
}

/** `ms` spread by ±`fraction` (0.1 = ±10%). */
export function jittered(ms: number, fraction: number, random: () => number = Math.random): number {
  return Math.max(0, Math.round(ms * (1 + fraction * (2 * random() - 1))));
}

/** Resolves after `ms`, or early (without error) when `signal` aborts. The timer never holds the process open. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  // Rejects only with the abort, which is the early end this sleep promises.
  return delay(ms, undefined, { signal, ref: false }).catch(() => undefined);
}

/** Waits `ms` milliseconds, or rejects with `signal.reason` as soon as it aborts. */
export function sleepOrAbort(ms: number, signal?: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).catch((err: unknown) => {
    throw signal?.aborted ? signal.reason : err;
  });
}
