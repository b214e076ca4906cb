//! `mls validate --check-sinks`: each sink of a valid config is built for a check only
//! (no state, nothing written), asked for its `healthcheck()` and closed, each step within
//! the sink's bound. One line per sink says what it answered.
import type { Config } from '../config/index.js';
import { TIMED_OUT, within } from '../time/bounded.js';
import { describeError } from '../errors.js';
import { sinkRegistry } from '../sinks/registry.js';
import type { SinkLogger } from '../sinks/contract.js';
import { formatDuration } from '../time/duration.js';

/** What one sink's check found. */
export interface SinkCheck {
  name: string;
  type: string;
  ok: boolean;
  detail?: string | undefined;
}

/** Checks every sink of `config`, at once; results in config order. Never rejects. */
export function checkSinks(config: Config, logger: SinkLogger): Promise<SinkCheck[]> {
  return Promise.all(
    config.sinks.map(async (sc): Promise<SinkCheck> => {
      const result = (ok: boolean, detail?: string): SinkCheck => ({ name: sc.name, type: sc.type, ok, detail });
      const boundMs = sinkRegistry.stepBoundMs(sc);
      const late = (what: string) => result(false, `${what} did not finish within ${formatDuration(boundMs)}`);
      let built;
      try {
        built = await within(() => sinkRegistry.build(sc, { name: sc.name, state: undefined, now: Date.now, logger, checkOnly: true }, { models: config.models }), boundMs);
      } catch (err) {
        return result(false, `cannot be built: ${describeError(err)}`);
      }
      if (built === TIMED_OUT) return late('building the sink');
      const sink = built;
      try {
        const answer = await within(() => sink.healthcheck(), boundMs);
        if (answer === TIMED_OUT) return late('the healthcheck');
        return result(answer.ok === true, answer.detail);
      } catch (err) {
        return result(false, `the healthcheck failed: ${describeError(err)}`);
      } finally {
        // The check's result is printed already; a sink that fails to close after a check has nothing left to lose.
        await within(() => sink.close(), boundMs).catch(() => undefined);
      }
    }),
  );
}

/** One line per sink: `sink NAME (TYPE): ok, DETAIL` or `sink NAME (TYPE): FAILED, DETAIL`. */
export function renderSinkChecks(checks: readonly SinkCheck[]): string {
  return checks.map((c) => `sink ${c.name} (${c.type}): ${c.ok ? 'ok' : 'FAILED'}${c.detail ? `, ${c.detail}` : ''}\n`).join('');
}
