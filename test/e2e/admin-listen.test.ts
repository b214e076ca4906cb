// The admin server's address taken by another process: at start, `mls run` says so in one
// line naming admin.listen and the address and exits 78 before it polls anything; at a
// reload (SIGHUP), the reload is refused with that line and the server keeps its address.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { page, startHostileService, type HostileService } from '../helpers/hostile-service.js';
import { runMls, sleep, startMls, waitFor, writeConfig, type MlsProcess } from './harness.js';

const TOKEN = 'tok-admin-listen-5c1e';
let dir: string;
let service: HostileService;
let other: Server;
let takenAddress: string;
let mls: MlsProcess | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-admin-'));
  service = await startHostileService(() => ({ body: page([]) }));
  other = createServer();
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  takenAddress = `127.0.0.1:${(other.address() as { port: number }).port}`;
});
afterEach(async () => {
  if (mls && mls.child.exitCode === null && mls.child.signalCode === null) {
    mls.child.kill('SIGKILL');
    await mls.exited;
  }
  mls = undefined;
});
afterAll(async () => {
  other?.close();
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
});

function config(name: string, listen: string): string {
  return writeConfig(
    dir,
    {
      api: { base_url: service.url, token: TOKEN },
      state: { path: join(dir, name, 'state.db') },
      poll: { interval: '1s', lookback: '5s', settle: '1s', start_at: '-1m', rate_limit: 'none' },
      models: [{ id: 'm1' }],
      sinks: [{ name: 'files', type: 'file', path: join(dir, name, 'out', '{model_id}.ndjson') }],
      admin: { listen },
    },
    `${name}.yaml`,
  );
}

describe('admin.listen in use by another process', () => {
  it('at start: one line naming admin.listen and the address, exit 78, nothing polled', { timeout: 30_000 }, async () => {
    const r = await runMls(['run', '--config', config('start', takenAddress)]);
    expect(r.code, r.stderr).toBe(78);
    expect(r.stderr.trim().split('\n')).toEqual([`mls: admin.listen: ${takenAddress} is in use by another process; stop it, or give admin.listen another port`]);
    expect(service.calls).toHaveLength(0);
  });

  it('at a reload: refused with that line, the admin server keeps its address; a free address is taken', { timeout: 30_000 }, async () => {
    const file = config('reload', '127.0.0.1:0');
    mls = startMls(['run', '--config', file]);
    const p = mls;
    let address = '';
    // the admin server listens before the daemon starts; SIGHUP is handled once it has
    await waitFor(() => (address = /"address":"([^"]+)"[^\n]*admin server listening/.exec(p.stderr())?.[1] ?? '') !== '' && p.stderr().includes('control socket listening'), 15_000, 'the daemon', 100, p.stderr);
    await sleep(200);
    config('reload', takenAddress);
    p.child.kill('SIGHUP');
    await waitFor(() => p.stderr().includes('reload rejected'), 15_000, 'the reload to be refused', 100, p.stderr);
    const refusal = p.stderr().split('\n').find((l) => l.includes('reload rejected'))!;
    expect(JSON.parse(refusal)).toMatchObject({ level: 'error', err: `admin.listen: ${takenAddress} is in use by another process; stop it, or give admin.listen another port` });
    expect((await fetch(`http://${address}/healthz`)).status).toBe(200);

    config('reload', ':0');
    p.child.kill('SIGHUP');
    let moved = '';
    await waitFor(() => (moved = /"address":"([^"]+)"[^\n]*admin server moved/.exec(p.stderr())?.[1] ?? '') !== '', 15_000, 'the admin server to move', 100, p.stderr);
    expect(moved).not.toBe(address);
    expect((await fetch(`http://${moved}/healthz`)).status).toBe(200);
    await expect(fetch(`http://${address}/healthz`)).rejects.toThrow();
    p.child.kill('SIGTERM');
    expect((await p.exited).code, p.stderr()).toBe(0);
  });
});
