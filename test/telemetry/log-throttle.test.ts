// A repeated line is let through once per interval, and the next one let through says how
// many were held back in between.
import { describe, expect, it } from 'vitest';
import { LogThrottle } from '../../src/telemetry/log-throttle.js';

describe('LogThrottle', () => {
  it('lets the first line through, holds back the ones within the interval, and counts them on the next', () => {
    const t = new LogThrottle(30_000);
    expect(t.take(1_000)).toEqual({ suppressed: 0 });
    expect(t.take(1_001)).toBeUndefined();
    expect(t.take(30_999)).toBeUndefined();
    expect(t.take(31_000)).toEqual({ suppressed: 2 });
    expect(t.take(61_000)).toEqual({ suppressed: 0 });
  });
});
