// A webhook answers 400 to one batch: the batch lands in the dead-letter table, delivery goes
// on, and `mls dlq replay` delivers it once the receiver is fixed, both through a running
// daemon and with the daemon stopped. `mls dlq purge` empties the table.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers.js';
import { StateReader } from '../../src/journal/reader.js';
import { entryKey, readState, runMls, sleep, startMls, waitFor, writeConfig } from './harness.js';

const TOKEN = 'tok-dlq-test-4c1f00';
let dir: string;
let sim: Simulator;
let hook: WebhookReceiver;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-dlq-'));
  sim = await startSimulator({ token: TOKEN, models: ['m1'], ratePerSec: 30, historyMs: 5_000, seed: 8 });
  hook = await startWebhookReceiver();
});
afterAll(async () => {
  await Promise.all([sim?.close(), hook?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

function deadLetters(path: string) {
  const s = StateReader.open(path);
  try {
    return s.listDeadLetters();
  } finally {
    s.close();
  }
}

describe('dead letters', () => {
  it('a rejected batch is kept, listed, and replayed through the running daemon and directly', { timeout: 90_000 }, async () => {
    const statePath = join(dir, 'state.db');
    const config = writeConfig(dir, {
      api: { base_url: sim.url, token: '${MLS_API_TOKEN}' },
      state: { path: statePath },
      poll: { interval: '300ms', lookback: '2s', settle: '100ms', start_at: '-5s', max_window: '1m', rate_limit: 'none' },
      models: [{ id: 'm1' }],
      sinks: [{ name: 'hook', type: 'webhook', url: hook.url, batch: { max_entries: 50, max_delay: '100ms' } }],
    });
    const env = { MLS_API_TOKEN: TOKEN };
    const daemon = startMls(['run', '--config', config], env);
    await waitFor(() => hook.requests.length > 0, 15_000, 'the first delivery');
    hook.failNext(400, 1, undefined, '{"error":"schema mismatch"}');
    await waitFor(() => deadLetters(statePath).length === 1, 15_000, 'a dead letter');
    const [dead] = deadLetters(statePath);
    expect(dead!.error).toContain('HTTP 400');
    expect(dead!.error).toContain('schema mismatch');
    const list = await runMls(['dlq', 'list', '--config', config, '--entries'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(`#${dead!.id}  sink=hook  entries=${dead!.count}`);
    const accepted = () => hook.requests.filter((r) => r.status === 200).flatMap((r) => r.entries.map(entryKey));
    // delivery goes on after the rejection
    const before = accepted().length;
    await waitFor(() => accepted().length > before, 10_000, 'deliveries after the rejection');

    // replay through the running daemon
    const replay = await runMls(['dlq', 'replay', '--config', config], env);
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout).toContain('marked for replay');
    await waitFor(() => deadLetters(statePath).length === 0, 15_000, 'the running daemon to replay the dead letter');
    const got = new Set(accepted());
    for (const e of dead!.entries) expect(got.has(entryKey({ model_id: e.modelId, time: e.time, stream: e.stream, log: e.log }))).toBe(true);

    // another rejection, replayed directly while the daemon is stopped (the receiver fails first, then is fixed)
    hook.failNext(400, 1);
    await waitFor(() => deadLetters(statePath).length === 1, 15_000, 'a second dead letter');
    daemon.child.kill('SIGTERM');
    expect((await daemon.exited).code, daemon.stderr()).toBe(0);
    hook.failNext(422, 1);
    const stillFailing = await runMls(['dlq', 'replay', '--config', config], env);
    expect(stillFailing.code).toBe(1);
    expect(stillFailing.stdout).toContain('still failing');
    expect(deadLetters(statePath)).toHaveLength(1);
    const fixed = await runMls(['dlq', 'replay', '--config', config], env);
    expect(fixed.code, fixed.stdout + fixed.stderr).toBe(0);
    expect(fixed.stdout).toContain('1 dead letters replayed, 0 still failing');
    expect(deadLetters(statePath)).toHaveLength(0);

    // purge
    const d2 = startMls(['run', '--config', config], env);
    await sleep(500);
    hook.failNext(400, 1);
    await waitFor(() => deadLetters(statePath).length === 1, 15_000, 'a third dead letter');
    d2.child.kill('SIGTERM');
    await d2.exited;
    const purge = await runMls(['dlq', 'purge', '--config', config, '--sink', 'hook'], env);
    expect(purge.stdout).toContain('1 dead letters purged');
    expect(deadLetters(statePath)).toHaveLength(0);
    expect(readState(statePath)!.cursors.get('hook')).toBeGreaterThan(0);
    const unknown = await runMls(['dlq', 'list', '--config', config, '--sink', 'nope'], env);
    expect(unknown.code).toBe(2);
  });
});
