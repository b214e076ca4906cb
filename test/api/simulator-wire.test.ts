// The service client against the project's own simulator over loopback: every page of a
// window is fetched under every end-of-pages style, both operations pass the simulator's
// checks of headers, paths, body and time format, and errors carry no token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { ApiAuthError, ApiClientError } from '../../src/api/errors.js';
import { startSimulator, type Simulator, type EndStyle } from '../../src/simulator/index.js';
import type { ApiClient } from '../../src/api/types.js';
import type { LogEntry } from '../../src/records/entry.js';

const TOKEN = 'tok-simwire-5a0b77';
const T_END = Date.now() - 1_000;

async function fetchAll(client: ApiClient, modelId: string, fromMs: number, toMs: number): Promise<{ entries: LogEntry[]; pages: number }> {
  const entries: LogEntry[] = [];
  let token: string | undefined;
  let pages = 0;
  do {
    const page = await client.getLogs({ modelId, fromMs, toMs, nextToken: token });
    entries.push(...page.entries);
    token = page.nextToken;
    pages++;
    expect(pages).toBeLessThan(1_000);
  } while (token !== undefined);
  return { entries, pages };
}

describe.each(['absent', 'null', 'empty', 'rotate'] as EndStyle[])('paging against the simulator (end style %s)', (endStyle) => {
  let sim: Simulator;
  let client: ApiClient;
  beforeAll(async () => {
    sim = await startSimulator({ token: TOKEN, models: ['m1'], ratePerSec: 50, historyMs: 30_000, pageSize: { min: 20, max: 80 }, order: 'shuffled', endStyle, seed: 4, clock: () => T_END });
    client = createApiClient({ baseUrl: `${sim.url}/`, token: TOKEN });
  });
  afterAll(async () => {
    await client.close();
    await sim.close();
  });

  it('reads every entry of the window exactly once, over many pages', async () => {
    const { entries, pages } = await fetchAll(client, 'm1', T_END - 60_000, T_END);
    expect(pages).toBeGreaterThan(5);
    const truth = sim.groundTruth('m1').map(({ model_id: _m, ...e }) => JSON.stringify(e)).sort();
    expect(entries.map((e) => JSON.stringify({ time: e.time, log: e.log, stream: e.stream })).sort()).toEqual(truth);
  });
});

describe('both operations against the simulator', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ token: TOKEN, models: ['m1'], ratePerSec: 1, seed: 1 });
  });
  afterAll(async () => sim.close());

  it('updates settings with exactly the fields given, and reads the confirmation', async () => {
    const client = createApiClient({ baseUrl: sim.url, token: TOKEN });
    const r = await client.updateSettings('m1', { min_replica: 1, max_replica: 3, is_dedicated: false });
    expect(r.details).toContain('m1');
    expect(sim.settingsUpdates.at(-1)).toMatchObject({ modelId: 'm1', data: { min_replica: 1, max_replica: 3, is_dedicated: false } });
    await expect(client.updateSettings('m1', { min_replica: -1 })).rejects.toBeInstanceOf(ApiClientError);
    await client.close();
  });

  it('a wrong token is an auth error that names neither token', async () => {
    const wrong = 'tok-wrong-SECRET-0001';
    const client = createApiClient({ baseUrl: sim.url, token: wrong });
    const err = await client.getLogs({ modelId: 'm1', fromMs: Date.now() - 1000, toMs: Date.now() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiAuthError);
    expect(JSON.stringify(err) + String(err) + (err as Error).stack).not.toContain(wrong);
    expect(String(err)).not.toContain(TOKEN);
    await client.close();
  });

  it('the bearer scheme is refused by a service that expects the raw token', async () => {
    const client = createApiClient({ baseUrl: sim.url, token: TOKEN, authScheme: 'bearer' });
    await expect(client.getLogs({ modelId: 'm1', fromMs: Date.now() - 1000, toMs: Date.now() })).rejects.toBeInstanceOf(ApiAuthError);
    await client.close();
  });
});
