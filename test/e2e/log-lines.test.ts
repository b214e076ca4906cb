// Every line the daemon logs is a JSON object that a strict pipeline accepts: no key twice
// in one object. The daemon runs with debug logs against a service that fails in every way
// the simulator knows, for two models, into a file sink and a webhook whose receiver
// answers 503 (retried), 400 (dead letter) and 200 in turn: the paths that log with a
// child logger bound to the model or the sink.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { sendJson, startServer, type TestServer } from '../api/helpers.js';
import { duplicateKeys } from '../helpers/strict-json.js';
import { readNdjsonTree, startMls, waitFor, writeConfig } from './harness.js';

const TOKEN = 'tok-loglines-8c1e2f';
const MODELS = ['lines-a', 'lines-b'];
let dir: string;
let sim: Simulator;
let receiver: TestServer;
const answered: number[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-lines-'));
  sim = await startSimulator({
    token: TOKEN,
    models: MODELS,
    ratePerSec: 20,
    historyMs: 10_000,
    pageSize: { min: 20, max: 60 },
    faults: { error500: 0.08, error503: 0.08, error429: 0.08, truncated: 0.08, html200: 0.08, retryAfter: 0 },
    seed: 23,
  });
  receiver = await startServer((_req, res, index) => {
    const status = index % 4 === 0 ? 503 : index % 4 === 2 ? 400 : 200;
    answered.push(status);
    if (status === 503) sendJson(res, 503, { error: 'busy' }, { 'retry-after': '0' });
    else if (status === 400) sendJson(res, 400, { error: 'this batch is refused' });
    else sendJson(res, 200, { ok: true });
  });
});
afterAll(async () => {
  await sim?.close();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the daemon log', () => {
  it('never writes a key twice in one line', { timeout: 90_000 }, async () => {
    const outDir = join(dir, 'out');
    const config = writeConfig(dir, {
      api: { base_url: sim.url, token: '${MLS_API_TOKEN}', retry: { deadline: '2s', base_delay: '20ms', max_delay: '200ms' }, timeouts: { connect: '1s', headers: '2s', body: '2s' } },
      state: { path: join(dir, 'state', 'state.db') },
      poll: { interval: '300ms', lookback: '2s', settle: '100ms', start_at: '-8s', max_window: '5s', rate_limit: 'none', reread: { ages: ['1s'] } },
      models: MODELS.map((id) => ({ id })),
      sinks: [
        { name: 'archive', type: 'file', path: join(outDir, '{model_id}.ndjson'), batch: { max_delay: '50ms' } },
        { name: 'hook', type: 'webhook', url: `${receiver.url}/in`, timeout: '2s', batch: { max_delay: '50ms', max_entries: 50 } },
      ],
      shutdown_timeout: '10s',
    });
    const daemon = startMls(['run', '--config', config, '--log-level', 'debug'], { MLS_API_TOKEN: TOKEN });
    try {
      await waitFor(() => readNdjsonTree(outDir).length > 100 || daemon.child.exitCode !== null, 20_000, 'entries in the file sink');
      await waitFor(
        () => answered.filter((s) => s === 503).length >= 2 && answered.includes(400) && answered.includes(200),
        20_000,
        'the webhook to be retried, refused and accepted',
      );
      await waitFor(() => Object.values(sim.stats().faultsInjected).filter((n) => (n ?? 0) > 0).length >= 3, 20_000, 'faults to be injected');
    } finally {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }
    const lines = daemon.stderr().split('\n').filter(Boolean);
    const repeated: string[] = [];
    const messages = new Set<string>();
    for (const line of lines) {
      const dups = duplicateKeys(line); // also throws on a line that is not JSON
      if (dups.length > 0) repeated.push(`${dups.join(', ')} in ${line}`);
      messages.add(String((JSON.parse(line) as { msg?: unknown }).msg));
    }
    const bySink = lines.filter((l) => l.includes('"sink":')).length;
    const byModel = lines.filter((l) => l.includes('"model":')).length;
    console.log(
      `log lines: ${lines.length} lines (${bySink} naming a sink, ${byModel} a model, ${messages.size} distinct messages), ` +
        `webhook answers ${answered.length}, faults ${JSON.stringify(sim.stats().faultsInjected)}: ${repeated.length} with a repeated key`,
    );
    expect(bySink).toBeGreaterThan(0);
    expect(byModel).toBeGreaterThan(0);
    expect(repeated).toEqual([]);
  });
});
