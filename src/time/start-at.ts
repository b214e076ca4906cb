//! `start_at`: where a model without a checkpoint starts polling.

/** Where polling starts for a model that has no checkpoint yet. */
export type StartAt =
  | { kind: 'now' }
  /** `ms` before the daemon's first poll of the model. */
  | { kind: 'relative'; ms: number }
  /** An absolute instant, epoch milliseconds. */
  | { kind: 'absolute'; ms: number };

/** Resolves `start_at` against the current time (epoch ms). */
export function resolveStart(startAt: StartAt, nowMs: number): number {
  switch (startAt.kind) {
    case 'now':
      return nowMs;
    case 'relative':
      return nowMs - Math.abs(startAt.ms);
    case 'absolute':
      return startAt.ms;
  }
}
