// The throughput benchmark's floor harness runs on real simulator pages and accounts for
// every entry (its timings are reported by the benchmark, never asserted here).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGS_PATH, startSimulator, type Simulator } from '../../src/simulator/index.js';

const TOKEN = 'floor-token-0123456789';
let sim: Simulator;
let dir: string;

beforeAll(async () => {
  sim = await startSimulator({ token: TOKEN, models: ['m1', 'm2'], ratePerSec: 40, historyMs: 120_000, pageSize: 500, seed: 5 });
  dir = mkdtempSync(join(tmpdir(), 'mls-floor-'));
});

afterAll(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

async function bodiesOf(modelId: string): Promise<Array<{ modelId: string; body: Buffer }>> {
  const out: Array<{ modelId: string; body: Buffer }> = [];
  const window = { model_id: modelId, time_from: new Date(Date.now() - 130_000).toISOString(), time_to: new Date().toISOString() };
  let next: string | undefined;
  do {
    const res = await fetch(`${sim.url}${LOGS_PATH}`, {
      method: 'POST',
      headers: { authorization: TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify(next ? { ...window, next_token: next } : window),
    });
    const body = Buffer.from(await res.arrayBuffer());
    out.push({ modelId, body });
    next = (JSON.parse(body.toString()) as { next_token?: string }).next_token;
  } while (next);
  return out;
}

describe('commit floor harness', () => {
  it('prepares, commits and syncs every entry of the pages it is given', async () => {
    const bodies = [...(await bodiesOf('m1')), ...(await bodiesOf('m2'))];
    const entries = bodies.reduce((n, b) => n + (JSON.parse(b.body.toString()) as { details: unknown[] }).details.length, 0);
    expect(entries).toBeGreaterThan(5_000);
    // @ts-expect-error -- a plain JavaScript module of the benchmarks, without type declarations
    const { measureCommitFloor } = (await import('../../bench/lib/commit-floor.js')) as { measureCommitFloor: (b: unknown, d: string) => Promise<Record<string, number>> };
    const floor = await measureCommitFloor(bodies, dir);
    expect(floor.pages).toBe(bodies.length);
    expect(floor.entries).toBe(entries);
    // Lines of the shape {"model_id":"m1","time":"…","stream":"…","log":"…"}: more than the keys alone.
    expect(floor.journal_line_bytes_per_entry).toBeGreaterThan(60);
  }, 60_000);
});
