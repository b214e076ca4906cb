// A sink's healthcheck as the daemon runs it: bounded, never failing, and said in one line
// (info when it passes, a warning with the detail when it does not), whatever the sink does.
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { boundedHealthcheck, logHealthcheck } from '../../src/delivery/healthcheck.js';
import type { Sink } from '../../src/sinks/contract.js';

function sinkWith(healthcheck: () => Promise<unknown>): Sink {
  return {
    healthcheck: healthcheck as Sink['healthcheck'],
    send: async () => ({ status: 'ok' }),
    flush: async () => {},
    close: async () => {},
  };
}

describe('a healthcheck run by the daemon', () => {
  it('passes on what the sink says', async () => {
    expect(await boundedHealthcheck(sinkWith(async () => ({ ok: true, detail: 'host reachable' })))).toEqual({ ok: true, detail: 'host reachable' });
    expect(await boundedHealthcheck(sinkWith(async () => ({ ok: false, detail: 'ECONNREFUSED' })))).toEqual({ ok: false, detail: 'ECONNREFUSED' });
  });

  it('fails, saying why, when the check throws, answers something else, or does not answer in time', async () => {
    expect(await boundedHealthcheck(sinkWith(() => Promise.reject(new Error('the plugin has a bug'))))).toEqual({ ok: false, detail: 'the healthcheck threw: the plugin has a bug' });
    expect(await boundedHealthcheck(sinkWith(async () => undefined))).toEqual({ ok: false, detail: 'the healthcheck answered without a boolean `ok`' });
    expect(await boundedHealthcheck(sinkWith(() => new Promise(() => {})), 50)).toEqual({ ok: false, detail: 'no answer within 50ms' });
  });

  it('logs a failing check as a warning naming the sink and the detail, a passing one at info', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'debug' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
    await logHealthcheck('hook', sinkWith(async () => ({ ok: false, detail: '127.0.0.1:9: connect ECONNREFUSED' })), logger);
    await logHealthcheck('files', sinkWith(async () => ({ ok: true, detail: '/var/log/mls is writable' })), logger);
    expect(lines).toMatchObject([
      { level: 40, sink: 'hook', error: '127.0.0.1:9: connect ECONNREFUSED', msg: 'sink healthcheck failed; delivery goes on and retries until the sink answers' },
      { level: 30, sink: 'files', detail: '/var/log/mls is writable', msg: 'sink healthcheck passed' },
    ]);
  });
});
