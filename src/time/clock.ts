//! The daemon's notion of "now". Windows are planned from the watermark and this clock;
//! a wall-clock step while the daemon runs is detected against the monotonic clock and
//! ignored (logged once), so a jump can neither skip a span of logs nor re-read one.

/** Source of the current time in epoch milliseconds. */
export interface Clock {
  now(): number;
}

/** Reads the wall clock directly. */
export const systemClock: Clock = { now: () => Date.now() };

/** Options of {@link steadyClock}. */
export interface SteadyClockOptions {
  /** Wall clock to follow; defaults to `Date.now`. Tests inject a jumping one here. */
  wall?: () => number;
  /** Monotonic milliseconds; defaults to `performance.now`. */
  monotonic?: () => number;
  /** A disagreement larger than this between wall and monotonic time is a step. Default 5 s. */
  stepToleranceMs?: number;
  /** Called once per detected step with its size in ms (positive: the wall clock jumped forward). */
  onStep?: (deltaMs: number) => void;
}

/**
 * A clock anchored on the wall clock at start and advanced by the monotonic clock.
 * Small disagreements (NTP slewing) are followed by re-anchoring; steps larger than
 * the tolerance are reported through `onStep` and not followed, so windows keep
 * advancing in real time whatever the wall clock does.
 */
export function steadyClock(options: SteadyClockOptions = {}): Clock {
  const wall = options.wall ?? (() => Date.now());
  const mono = options.monotonic ?? (() => performance.now());
  const tolerance = options.stepToleranceMs ?? 5_000;
  let anchorWall = wall();
  let anchorMono = mono();
  let lastReportedOffset = 0;
  return {
    now() {
      const m = mono();
      const steady = anchorWall + (m - anchorMono);
      const w = wall();
      const offset = w - steady;
      if (Math.abs(offset) <= tolerance) {
        anchorWall = w;
        anchorMono = m;
        lastReportedOffset = 0;
        return w;
      }
      if (Math.abs(offset - lastReportedOffset) > tolerance) {
        lastReportedOffset = offset;
        options.onStep?.(offset);
      }
      return Math.round(steady);
    },
  };
}
