// Twenty SIGKILLs with the file, webhook and OTLP sinks at once, while the simulator injects
// about 20% faults, late arrivals, shuffled pages and expiring tokens. The file sink must
// hold every entry exactly once; the network sinks every entry at least once, where every
// repeat is a re-send of a batch that was in flight, under the same Idempotency-Key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { parseEntryTime } from '../../src/time/timestamp.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { compareMultisets, entryKey, readNdjsonTree, readState, sleep, startMls, truthSince, waitFor, writeConfig } from './harness.js';

const TOKEN = 'tok-crash-network-3d90e1';
const SECRET = 'whsec-crash-network-77';
const MODELS = ['alpha', 'beta'];
const KILLS = 20;

let dir: string;
let sim: Simulator;
let hook: WebhookReceiver;
let otlp: OtlpReceiver;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-crashnet-'));
  sim = await startSimulator({
    token: TOKEN,
    models: MODELS,
    ratePerSec: 40,
    historyMs: 40_000,
    ingestDelayMs: { min: 0, max: 2_000 },
    pageSize: { min: 10, max: 150 },
    order: 'shuffled',
    endStyle: 'rotate',
    tokenTtlMs: 1_000,
    twinRate: 0.03,
    multilineRate: 0.03,
    unicodeRate: 0.05,
    faults: { error500: 0.06, error503: 0.04, error429: 0.03, truncated: 0.03, html200: 0.03, slow: 0.01, slowMs: 300, retryAfter: 0 },
    seed: 20,
  });
  hook = await startWebhookReceiver({ secret: SECRET });
  otlp = await startOtlpReceiver({ protocol: 'http' });
});

afterAll(async () => {
  await Promise.all([sim?.close(), hook?.close(), otlp?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('crash safety with network sinks', () => {
  it(`file exactly once, webhook and OTLP at least once with stable keys, across ${KILLS} SIGKILLs`, { timeout: 180_000 }, async () => {
    const statePath = join(dir, 'state.db');
    const outDir = join(dir, 'out');
    const batch = { max_entries: 150, max_delay: '100ms' };
    const config = writeConfig(dir, {
      api: { base_url: sim.url, token: '${MLS_API_TOKEN}', retry: { deadline: '3s', base_delay: '20ms', max_delay: '300ms' }, timeouts: { connect: '2s', headers: '2s', body: '2s' } },
      state: { path: statePath },
      poll: { interval: '400ms', lookback: '6s', settle: '300ms', start_at: '-35s', max_window: '15s', concurrency: 4, rate_limit: 'none', reread: { ages: ['2s'] } },
      models: MODELS.map((id) => ({ id })),
      sinks: [
        { name: 'archive', type: 'file', path: join(outDir, '{model_id}.ndjson'), batch },
        { name: 'hook', type: 'webhook', url: hook.url, compression: 'gzip', concurrency: 3, signing_secret: '${HOOK_SECRET}', batch, retry: { base_delay: '50ms', max_delay: '500ms' } },
        { name: 'otel', type: 'otlp', endpoint: otlp.endpoint, protocol: 'http/protobuf', batch, retry: { base_delay: '50ms', max_delay: '500ms' } },
      ],
      log: { level: 'warn' },
    });
    const env = { MLS_API_TOKEN: TOKEN, HOOK_SECRET: SECRET };
    let kills = 0;
    let seed = 11;
    const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    for (let i = 0; i < KILLS; i++) {
      const p = startMls(['run', '--config', config], env);
      await sleep(300 + Math.floor(rnd() * 1_200));
      p.child.kill('SIGKILL');
      const { signal, code } = await p.exited;
      if (signal !== 'SIGKILL') throw new Error(`daemon exited by itself (code ${code}):\n${p.stderr()}`);
      kills++;
      expect(p.stderr()).not.toContain(TOKEN);
      expect(p.stderr()).not.toContain(SECRET);
    }
    const final = startMls(['run', '--config', config], env);
    await sleep(800);
    sim.stopProducing();
    const stoppedAt = Date.now();
    await waitFor(() => {
      const st = readState(statePath);
      return !!st && MODELS.every((m) => (st.watermarks.get(m) ?? 0) > stoppedAt + 2_500 + 6_000) && [...st.cursors.values()].every((c) => c === st.lastSeq);
    }, 60_000, 'every sink to drain after the last late arrival');
    final.child.kill('SIGTERM');
    expect((await final.exited).code, final.stderr()).toBe(0);

    const st = readState(statePath)!;
    const truth = truthSince(sim.groundTruth(), st.starts);
    const file = compareMultisets(truth.map(entryKey), readNdjsonTree(outDir).map(entryKey));

    // Webhook: counting each Idempotency-Key once gives exactly the truth; every repeat came under a key seen before, with the same body.
    const accepted = hook.requests.filter((r) => r.status >= 200 && r.status < 300);
    expect(accepted.every((r) => r.signatureValid === true)).toBe(true);
    const bodies = new Map<string, string>();
    let resentBatches = 0;
    for (const r of accepted) {
      const key = r.idempotencyKey!;
      const body = JSON.stringify(r.entries);
      if (bodies.has(key)) {
        resentBatches++;
        expect(bodies.get(key), 'a repeated Idempotency-Key must carry the same batch').toBe(body);
      } else bodies.set(key, body);
    }
    const hookUnique = compareMultisets(truth.map(entryKey), hook.uniqueEntries().map(entryKey));
    const hookAll = compareMultisets(truth.map(entryKey), hook.entries().map(entryKey));

    // OTLP: exact nanosecond timestamps; nothing lost.
    const nsKey = (model: string, ns: bigint, stream: string, log: string) => JSON.stringify([model, ns.toString(), stream, log]);
    const truthNs = truth.map((e) => {
      const t = parseEntryTime(e.time);
      return nsKey(e.model_id, t.ok ? t.ns : 0n, e.stream, e.log);
    });
    const otlpGot = otlp.logRecords().map((r) => nsKey(String(r.attributes['mls.model_id']), r.timeUnixNano, String(r.attributes['log.iostream']), r.body));
    const otel = compareMultisets(truthNs, otlpGot);

    console.log(
      `network crash test: ${kills} SIGKILLs; produced ${truth.length}; ` +
        `file delivered ${file.delivered} (lost ${file.lost}, duplicated ${file.duplicated}); ` +
        `webhook delivered ${hookAll.delivered} in ${accepted.length} requests (lost ${hookAll.lost}, duplicated ${hookAll.duplicated}, ${resentBatches} batches re-sent under the same key; by key: lost ${hookUnique.lost}, duplicated ${hookUnique.duplicated}); ` +
        `otlp delivered ${otel.delivered} (lost ${otel.lost}, duplicated ${otel.duplicated})`,
    );
    expect(truth.length).toBeGreaterThan(3_000);
    expect(file).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
    expect(hookUnique).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
    expect(hookAll).toMatchObject({ lost: 0, unexpected: 0 });
    expect(otel).toMatchObject({ lost: 0, unexpected: 0 });
  });
});
