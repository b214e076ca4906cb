//! `mls simulate`: flag parsing, token handling, start and stop.
import { Command } from 'commander';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { register, runSimulate, simulatorOptionsFromFlags } from '../../src/cli/simulate.js';
import { UsageError } from '../../src/errors.js';
import { iso, post } from './helpers.js';

describe('mls simulate', () => {
  it('turns flags into simulator options, with defaults', () => {
    const o = simulatorOptionsFromFlags(
      { models: 'a, b', rate: '2.5', history: '10m', ingestDelay: '0s-20s', pageSize: '100-1000', order: 'shuffled', endStyle: 'rotate', tokenTtl: '1m', faultRate: '0.1', twins: '0.01', invalidEntries: '0.05', content: 'plain', seed: '9', port: '0' },
      'tok',
    );
    expect(o).toMatchObject({
      token: 'tok',
      models: ['a', 'b'],
      ratePerSec: 2.5,
      historyMs: 600_000,
      ingestDelayMs: { min: 0, max: 20_000 },
      pageSize: { min: 100, max: 1000 },
      order: 'shuffled',
      endStyle: 'rotate',
      tokenTtlMs: 60_000,
      twinRate: 0.01,
      offSpecRate: 0.05,
      content: 'plain',
      seed: 9,
      port: 0,
      host: '127.0.0.1',
    });
    const total = Object.values(o.faults as Record<string, number>).reduce((a, b) => a + b, 0);
    expect(total).toBeCloseTo(0.1);
    const d = simulatorOptionsFromFlags({}, 'tok');
    expect(d).toMatchObject({ models: ['model-1', 'model-2', 'model-3'], port: 8080, pageSize: 500, ingestDelayMs: { min: 0, max: 0 }, content: 'python', offSpecRate: 0 });
    expect(simulatorOptionsFromFlags({ modelCount: '2', ingestDelay: '5s' }, 't')).toMatchObject({ models: ['model-1', 'model-2'], ingestDelayMs: { min: 5000, max: 5000 } });
    expect(simulatorOptionsFromFlags({ hostileLines: '0.01' }, 't')).toMatchObject({ hostileRate: 0.01 });
    expect(d).toMatchObject({ hostileRate: 0 });
  });

  it.each([
    [{ rate: 'fast' }, /--rate/],
    [{ history: '10 minutes' }, /--history/],
    [{ ingestDelay: '20s-1s' }, /--ingest-delay/],
    [{ pageSize: '0' }, /--page-size/],
    [{ order: 'random' }, /--order/],
    [{ endStyle: 'none' }, /--end-style/],
    [{ faultRate: '2' }, /--fault-rate/],
    [{ invalidEntries: '1.5' }, /--invalid-entries must be a number between 0 and 1/],
    [{ models: 'a,,b' }, /--models/],
    [{ models: 'a', modelCount: '3' }, /--model-count/],
    [{ port: '70000' }, /--port/],
    [{ seed: '-1' }, /--seed/],
    [{ content: 'java' }, /--content must be one of python, plain/],
    [{ hostileLines: '2' }, /--hostile-lines/],
  ])('rejects %j with a usage error naming the flag', (flags, message) => {
    expect(() => simulatorOptionsFromFlags(flags, 't')).toThrow(UsageError);
    expect(() => simulatorOptionsFromFlags(flags, 't')).toThrow(message);
  });

  it('serves with the token from MLS_API_TOKEN, announces its address without the token, and stops', async () => {
    const stderr = new PassThrough();
    let out = '';
    stderr.on('data', (c: Buffer) => (out += c.toString()));
    const ac = new AbortController();
    let url = '';
    const done = runSimulate(
      { port: '0', models: 'alpha,beta', history: '1m', rate: '5' },
      { env: { MLS_API_TOKEN: 'secret-token-xyz' }, stderr, signal: ac.signal, onListening: (s) => (url = s.url) },
    );
    await waitFor(() => url !== '');
    expect(out).toMatch(/^simulator listening on http:\/\/127\.0\.0\.1:\d+ \(models: alpha, beta\)\n/);
    expect(out).not.toContain('secret-token-xyz');
    const body = { model_id: 'beta', time_from: iso(Date.now() - 60_000), time_to: iso(Date.now()) };
    expect((await post(url, '/rest/model/logs/get/', body, { authorization: 'secret-token-xyz' })).status).toBe(200);
    expect((await post(url, '/rest/model/logs/get/', body, { authorization: 'sim-token' })).status).toBe(401);
    ac.abort();
    await done;
    expect(out).toContain('simulator stopped');
    await expect(post(url, '/rest/model/logs/get/', body)).rejects.toThrow();
  });

  it('defaults the token to sim-token', async () => {
    const ac = new AbortController();
    let url = '';
    const done = runSimulate({ port: '0', history: '0s' }, { env: {}, stderr: new PassThrough(), signal: ac.signal, onListening: (s) => (url = s.url) });
    await waitFor(() => url !== '');
    const body = { model_id: 'model-1', time_from: iso(Date.now() - 1000), time_to: iso(Date.now()) };
    expect((await post(url, '/rest/model/logs/get/', body, { authorization: 'sim-token' })).status).toBe(200);
    ac.abort();
    await done;
  });

  it('registers the simulate command with its flags', () => {
    const program = new Command();
    register(program);
    const cmd = program.commands.find((c) => c.name() === 'simulate')!;
    const flags = cmd.options.map((o) => o.long);
    for (const f of ['--host', '--port', '--models', '--model-count', '--rate', '--history', '--ingest-delay', '--page-size', '--order', '--end-style', '--token-ttl', '--fault-rate', '--twins', '--invalid-entries', '--hostile-lines', '--seed']) {
      expect(flags).toContain(f);
    }
  });
});

async function waitFor(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!cond()) throw new Error('timed out');
}
