// SIGTERM stops `mls run` promptly whatever the service is doing: a request waiting out a
// `Retry-After: 10` between 503s, a request the service never answers, a body arriving a few
// bytes at a time, an answer that takes 20 s. With nothing left to deliver, the process exits 0 within 2 s of the signal (a promise
// of the README). A page received before the signal is still committed and delivered, and the
// abandoned request is not reported as a failure.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { createConnection, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { page, startHostileService, type Behaviour, type HostileService } from '../helpers/hostile-service.js';
import { readNdjsonTree, sleep, startMls, waitFor, writeConfig, type MlsProcess } from './harness.js';

const TOKEN = 'tok-stop-test-93be';
let dir: string;
let service: HostileService | undefined;
let mls: MlsProcess | undefined;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-stop-'));
});
afterEach(async () => {
  if (mls && mls.child.exitCode === null && mls.child.signalCode === null) {
    mls.child.kill('SIGKILL');
    await mls.exited;
  }
  await service?.close();
  mls = service = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts `mls run` against a fake service answering with `behaviour`. */
async function run(name: string, behaviour: Behaviour, poll: Record<string, unknown> = {}, models = ['m1'], more: Record<string, unknown> = {}): Promise<{ p: MlsProcess; out: string }> {
  service = await startHostileService(behaviour);
  const out = join(dir, name, 'out');
  const config = writeConfig(join(dir), {
    api: { base_url: service.url, token: TOKEN },
    state: { path: join(dir, name, 'state.db') },
    poll: { interval: '1s', lookback: '5s', settle: '1s', start_at: '-1m', rate_limit: 'none', ...poll },
    models: models.map((id) => ({ id })),
    sinks: [{ name: 'files', type: 'file', path: join(out, '{model_id}.ndjson'), batch: { max_delay: '20ms' } }],
    ...more,
  }, `${name}.yaml`);
  mls = startMls(['run', '--config', config]);
  return { p: mls, out };
}

/** Sends SIGTERM and returns the exit code and the time from the signal to the exit (ms). */
async function terminate(p: MlsProcess): Promise<{ code: number | null; ms: number }> {
  const t0 = performance.now();
  p.child.kill('SIGTERM');
  const end = await Promise.race([p.exited, sleep(40_000).then(() => undefined)]);
  const ms = Math.round(performance.now() - t0);
  return { code: end ? end.code : null, ms };
}

/** What the daemon logged after it began to stop. */
function afterStopping(p: MlsProcess): string {
  const text = p.stderr();
  const at = text.indexOf('"msg":"stopping"');
  expect(at, text).toBeGreaterThan(-1);
  return text.slice(at);
}

describe('SIGTERM', () => {
  it('ends a wait for Retry-After: 10 between 503s at once: exit 0 within 2 s', { timeout: 90_000 }, async () => {
    const { p } = await run('retry-after', () => ({ status: 503, headers: { 'retry-after': '10' }, body: { status: 'error', details: 'overloaded' } }));
    await waitFor(() => p.stderr().includes('retrying'), 30_000, 'the client to wait before a retry', 100, p.stderr);
    await sleep(500);
    const calls = service!.calls.length;
    const { code, ms } = await terminate(p);
    console.log(`503 with Retry-After 10: exit ${code} ${ms} ms after SIGTERM (${calls} requests before it)`);
    expect(code, p.stderr()).toBe(0);
    expect(ms).toBeLessThan(2_000);
    expect(service!.calls.length).toBe(calls); // no retry after the signal
    expect(afterStopping(p)).not.toMatch(/fetching logs failed|retrying/);
  });

  it('abandons a request the service never answers, after committing the page received before it: exit 0 within 2 s', { timeout: 90_000 }, async () => {
    const first = [
      { time: new Date(Date.now() - 30_000).toISOString(), stream: 'stdout', log: 'first page, line 1' },
      { time: new Date(Date.now() - 29_000).toISOString(), stream: 'stdout', log: 'first page, line 2' },
    ];
    const { p, out } = await run('hang', (call) => (call.index === 0 ? { body: page(first, 'tok-2') } : { hang: true }));
    await waitFor(() => service!.calls.length >= 2 && readNdjsonTree(out).length === 2, 30_000, 'the first page delivered and the second request hanging', 100, p.stderr);
    await sleep(1_000);
    const { code, ms } = await terminate(p);
    console.log(`never answering: exit ${code} ${ms} ms after SIGTERM`);
    expect(code, p.stderr()).toBe(0);
    expect(ms).toBeLessThan(2_000);
    expect(readNdjsonTree(out).map((l) => l.log)).toEqual(first.map((e) => e.log));
    expect(afterStopping(p)).not.toMatch(/fetching logs failed|retrying|"level":50/);
  });

  it('abandons a page whose body arrives a few bytes at a time: exit 0 within 2 s', { timeout: 90_000 }, async () => {
    const entries = Array.from({ length: 20 }, (_, i) => ({ time: new Date(Date.now() - 30_000 + i).toISOString(), stream: 'stdout', log: `slow line ${i}` }));
    // About 1.4 KB at 16 bytes every 300 ms: 25 s for the whole body.
    const { p, out } = await run('trickle', () => ({ body: page(entries), trickle: { bytes: 16, everyMs: 300 } }));
    await waitFor(() => service!.calls.length >= 1, 30_000, 'the first request', 100, p.stderr);
    await sleep(1_500);
    const { code, ms } = await terminate(p);
    console.log(`body trickling: exit ${code} ${ms} ms after SIGTERM`);
    expect(code, p.stderr()).toBe(0);
    expect(ms).toBeLessThan(2_000);
    expect(readNdjsonTree(out)).toEqual([]); // never fully received: nothing committed
    expect(afterStopping(p)).not.toMatch(/fetching logs failed|retrying|cut short/);
  });

  it('abandons an answer that would take 20 s: exit 0 within 2 s', { timeout: 90_000 }, async () => {
    const { p } = await run('slow', () => ({ body: page([]), delayMs: 20_000 }));
    await waitFor(() => service!.calls.length >= 1, 30_000, 'the first request', 100, p.stderr);
    await sleep(1_000);
    const { code, ms } = await terminate(p);
    console.log(`answering after 20 s: exit ${code} ${ms} ms after SIGTERM`);
    expect(code, p.stderr()).toBe(0);
    expect(ms).toBeLessThan(2_000);
    expect(afterStopping(p)).not.toMatch(/fetching logs failed|retrying/);
  });

  it('does not wait for the turns of requests queued behind the rate limit: exit 0 within 2 s', { timeout: 90_000 }, async () => {
    // One request at a time, one a second: ten models queue behind one the service never answers.
    const models = Array.from({ length: 10 }, (_, i) => `q${i}`);
    const { p } = await run('queued', () => ({ hang: true }), { concurrency: 1, rate_limit: '1/s' }, models);
    await waitFor(() => service!.calls.length >= 1, 30_000, 'the first request', 100, p.stderr);
    await sleep(1_000);
    const { code, ms } = await terminate(p);
    console.log(`${models.length} models queued behind the rate limit: exit ${code} ${ms} ms after SIGTERM (${service!.calls.length} requests sent)`);
    expect(code, p.stderr()).toBe(0);
    expect(ms).toBeLessThan(2_000);
  });

  it('is not held by idle clients: of the control socket, of the admin server on a kept-alive connection, or halfway through a request', { timeout: 90_000 }, async () => {
    const { p } = await run('idle-clients', () => ({ body: page([]) }), {}, ['m1'], { admin: { listen: '127.0.0.1:0' } });
    let address = '';
    await waitFor(() => (address = /"address":"([^"]+)"[^\n]*admin server listening/.exec(p.stderr())?.[1] ?? '') !== '' && p.stderr().includes('control socket listening'), 30_000, 'the admin server and the control socket', 100, p.stderr);
    const clients: Socket[] = [];
    const open = (path: string | { host: string; port: number }) =>
      new Promise<Socket>((resolve, reject) => {
        const s = typeof path === 'string' ? createConnection(path) : createConnection(path);
        s.once('connect', () => resolve(s)).once('error', reject);
        s.on('error', () => {}); // the daemon closes it
        clients.push(s);
      });
    // connected to the control socket, and never a word
    await open(join(dir, 'idle-clients', 'state.db.sock'));
    // one admin request answered on a kept-alive connection that then sits idle
    const agent = new Agent({ keepAlive: true });
    const status = await new Promise<number>((resolve, reject) => get(`http://${address}/healthz`, { agent }, (res) => res.resume().on('end', () => resolve(res.statusCode ?? 0))).on('error', reject));
    expect(status).toBe(200);
    // and a request whose headers never end
    const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
    (await open({ host, port })).write('GET /status HTTP/1.1\r\nHost: mls\r\n');
    await sleep(300);
    const end = await Promise.race([terminate(p), sleep(10_000).then(() => undefined)]);
    console.log(`idle control client, idle kept-alive admin client, half-sent admin request: ${end ? `exit ${end.code} ${end.ms} ms after SIGTERM` : 'still running 10 s after SIGTERM'}`);
    expect(end, 'the daemon exits before the 10 s watchdog').toBeDefined();
    expect(end!.code, p.stderr()).toBe(0);
    for (const c of clients) c.destroy();
    agent.destroy();
  });
});
