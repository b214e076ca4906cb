// A state file made anew beside a file sink's files (the old one moved aside, lost with a
// volume, or state.path changed): the new state has no offset for the bytes the files already
// hold. The daemon keeps them and appends after them, and says so: one error line per file
// naming it, and the bytes in mls_file_sink_unknown_bytes_total. Entries read again from
// start_at may then repeat lines those bytes hold, which is what the error line warns of.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { readNdjsonTree, startMls, waitFor, writeConfig } from './harness.js';

const TOKEN = 'tok-state-anew-71b3';
const env = { MLS_API_TOKEN: TOKEN };
let dir: string;
let sim: Simulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-anew-'));
  sim = await startSimulator({ token: TOKEN, models: ['m1', 'm2'], ratePerSec: 50, historyMs: 10_000, seed: 5 });
});
afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a state file made anew beside a file sink whose files hold bytes', () => {
  it('keeps the bytes, appends after them, logs one error per file naming it and counts the bytes', { timeout: 60_000 }, async () => {
    const out = join(dir, 'out');
    const config = writeConfig(dir, {
      api: { base_url: sim.url, token: '${MLS_API_TOKEN}' },
      state: { path: join(dir, 'state', 'state.db') },
      poll: { interval: '300ms', lookback: '2s', settle: '100ms', start_at: '-10s', max_window: '1m', rate_limit: 'none' },
      models: [{ id: 'm1' }, { id: 'm2' }],
      sinks: [{ name: 'files', type: 'file', path: join(out, '{model_id}.ndjson'), batch: { max_delay: '50ms' } }],
      admin: { listen: '127.0.0.1:0' },
      shutdown_timeout: '10s',
    });
    const first = startMls(['run', '--config', config], env);
    await waitFor(() => readNdjsonTree(out).length > 100 && readdirSync(out).length === 2, 20_000, 'lines in both files', 100, first.stderr);
    first.child.kill('SIGTERM');
    expect((await first.exited).code, first.stderr()).toBe(0);
    const before = new Map(readdirSync(out).map((name) => [join(out, name), readFileSync(join(out, name))]));
    rmSync(join(dir, 'state'), { recursive: true }); // the state file is gone; the output files stay

    const second = startMls(['run', '--config', config], env);
    try {
      const errors = () => second.stderr().split('\n').filter((l) => l.includes('"level":"error"'));
      await waitFor(() => errors().length >= 2, 20_000, 'an error line for each file', 100, second.stderr);
      const address = /"address":"([^"]+)"[^\n]*admin server listening/.exec(second.stderr())![1];
      const metrics = await (await fetch(`http://${address}/metrics`)).text();
      const bytes = [...before.values()].reduce((n, b) => n + b.length, 0);
      expect(metrics).toContain(`mls_file_sink_unknown_bytes_total{sink="files"} ${bytes}`);
      const lines = errors().map((l) => JSON.parse(l) as { path: string; bytes: number; msg: string });
      expect(lines.map((l) => [l.path, l.bytes]).sort()).toEqual([...before].map(([path, b]) => [path, b.length]).sort());
      for (const l of lines) expect(l.msg).toMatch(/written before this sink's state began.*lines may repeat/);
      // nothing cut: each file still starts with what it held
      await waitFor(() => [...before].every(([path, b]) => statSync(path).size > b.length), 20_000, 'new lines after the old bytes', 100, second.stderr);
      for (const [path, b] of before) expect(readFileSync(path).subarray(0, b.length).equals(b), path).toBe(true);
      expect(errors()).toHaveLength(2);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});
