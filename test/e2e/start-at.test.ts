// `start_at` is resolved once per model and stored; a model with a checkpoint keeps it when
// `start_at` changes. That must be said in the log, with both values, at start and at a reload
// that changes the model's `start_at`; an unchanged absolute `start_at` says nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { parseConfig } from '../../src/cli/config.js';
import { Daemon } from '../../src/daemon/index.js';
import { page, startHostileService, type HostileService } from '../helpers/hostile-service.js';
import { waitFor } from './harness.js';

const TOKEN = 'tok-start-at-test-0b4e';
let dir: string;
let service: HostileService;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-start-at-'));
  service = await startHostileService(() => ({ body: page([]) }));
});
afterAll(async () => {
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
});

function config(startAt: string, m2StartAt?: string) {
  return parseConfig(
    {
      api: { base_url: service.url, token: TOKEN },
      state: { path: join(dir, 'state.db') },
      poll: { interval: '200ms', lookback: '5s', settle: '100ms', start_at: startAt, rate_limit: 'none' },
      models: [{ id: 'm1' }, { id: 'm2', ...(m2StartAt ? { start_at: m2StartAt } : {}) }],
      sinks: [{ name: 'files', type: 'file', path: join(dir, 'out', '{model_id}.ndjson') }],
    },
    { baseDir: dir, env: {} },
  );
}

/** Runs the daemon until both models have polled, then stops it; returns its log lines about start_at. */
async function runOnce(cfg: ReturnType<typeof config>, during?: (d: Daemon) => Promise<void>): Promise<Array<Record<string, unknown>>> {
  const lines: Array<Record<string, unknown>> = [];
  const daemon = await Daemon.start({ config: cfg, logger: pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) }) });
  try {
    const calls = service.calls.length;
    await waitFor(() => service.calls.slice(calls).some((c) => c.modelId === 'm1') && service.calls.slice(calls).some((c) => c.modelId === 'm2'), 20_000, 'both models polled');
    await during?.(daemon);
  } finally {
    await daemon.stop();
  }
  return lines.filter((l) => typeof l.msg === 'string' && l.msg.includes('start_at'));
}

describe('a changed start_at', () => {
  it('is said once, at the start or reload that first sees it, with both settings', { timeout: 60_000 }, async () => {
    const first = '2026-01-01T00:00:00.000Z';
    const second = '2025-06-01T00:00:00.000Z';
    expect(await runOnce(config(first))).toEqual([]); // new models: nothing to say
    expect(await runOnce(config(first))).toEqual([]); // unchanged: nothing to say

    const changed = await runOnce(config(second));
    console.log(JSON.stringify(changed[0]));
    expect(changed).toHaveLength(1); // one line for both models
    expect(changed[0]).toMatchObject({ level: 30, start_at: second, previous: first, count: 2, models: ['m1', 'm2'] });
    expect(changed[0]!.msg).toMatch(/keep it and resume from it/);
    expect(changed[0]!.msg).toMatch(/move the state file aside/);
    expect(await runOnce(config(second))).toEqual([]); // said once, then recorded

    // A relative start_at is compared as written: unchanged, it says nothing at later starts.
    const relative = await runOnce(config('-1h'));
    expect(relative.map((l) => [l.previous, l.start_at, l.models])).toEqual([[second, '-1h', ['m1', 'm2']]]);
    const reloads = await runOnce(config('-1h'), async (d) => {
      await d.reload(config('-1h', first)); // m2 only: its own start_at is set
      await d.reload(config('-1h', first)); // unchanged
      await d.reload(config('-1h', '-2h')); // and then changed again
    });
    expect(reloads.map((l) => [l.previous, l.start_at, l.models])).toEqual([
      ['-1h', first, ['m2']],
      [first, '-2h', ['m2']],
    ]);
  });
});
