// The admin server serves whatever answers the StatusSource interface, not only a running
// daemon: liveness, readiness (with each reason), the status snapshot and the metrics.
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { adminForReload, startAdminServer, type AdminServer, type StatusSource } from '../../src/admin/server.js';
import { ConfigError } from '../../src/errors.js';
import type { DaemonStatus } from '../../src/daemon/status.js';

let admin: AdminServer | undefined;
afterEach(async () => {
  await admin?.close();
  admin = undefined;
});

function source(over: Partial<{ alive: boolean; store: boolean; lagSeconds: number; failingSeconds: number }> = {}): StatusSource {
  const status: DaemonStatus = {
    installationId: 'e0c1a0de-0000-4000-8000-000000000001',
    models: [{ id: 'm1', startMs: 0, watermarkMs: 1_000, lagSeconds: over.lagSeconds ?? 5, window: undefined, lastError: over.lagSeconds ? 'service answered 503' : undefined }],
    sinks: [{ name: 'hook', type: 'webhook', cursor: 10, backlogEntries: 2, deliveredEntries: 10, droppedEntries: 0, deadLetters: 0, lastError: over.failingSeconds ? 'connect ECONNREFUSED' : undefined, failingSeconds: over.failingSeconds }],
    journal: { entries: 2, bytes: 200, lastSeq: 12 },
  };
  return {
    status: () => status,
    loopAlive: () => over.alive ?? true,
    storeHealthy: () => over.store ?? true,
    metrics: { text: async () => 'mls_up 1\n', contentType: 'text/plain; version=0.0.4; charset=utf-8' },
  };
}

async function get(path: string): Promise<{ status: number; type: string | null; body: string }> {
  const res = await fetch(`http://${admin!.address}${path}`);
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
}

describe('the admin server over a StatusSource', () => {
  it('serves status, metrics, liveness and readiness of a healthy source', async () => {
    admin = await startAdminServer({ daemon: source(), listen: '127.0.0.1:0', maxLagMs: 60_000, logger: pino({ level: 'silent' }) });
    expect(await get('/healthz')).toMatchObject({ status: 200, body: 'ok\n' });
    expect(await get('/readyz')).toMatchObject({ status: 200, body: 'ready\n' });
    expect(await get('/metrics')).toEqual({ status: 200, type: 'text/plain; version=0.0.4; charset=utf-8', body: 'mls_up 1\n' });
    const status = await get('/status');
    expect(JSON.parse(status.body)).toMatchObject({ models: [{ id: 'm1' }], sinks: [{ name: 'hook' }] });
  });

  it('reports a stalled loop, and every reason it is not ready', async () => {
    admin = await startAdminServer({ daemon: source({ alive: false, store: false, lagSeconds: 600, failingSeconds: 120 }), listen: '127.0.0.1:0', maxLagMs: 60_000, logger: pino({ level: 'silent' }) });
    expect(await get('/healthz')).toMatchObject({ status: 503, body: 'the daemon loop is stalled\n' });
    const ready = await get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.split('\n').filter(Boolean)).toEqual([
      'state store is not open',
      'model m1 is behind by 10m (health.max_lag 1m): service answered 503',
      'sink hook has failed without delivering for 2m (health.max_lag 1m): connect ECONNREFUSED',
    ]);
  });
});

/** A port another process (here: another server) listens on, on 127.0.0.1. */
async function taken(): Promise<{ address: string; server: Server }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { address: `127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

describe('the address of the admin server', () => {
  it('in use: a ConfigError naming admin.listen and the address, with the fix', async () => {
    const other = await taken();
    try {
      const err = await startAdminServer({ listen: other.address, maxLagMs: 60_000, logger: pino({ level: 'silent' }) }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).exitCode).toBe(78);
      expect((err as Error).message).toBe(`admin.listen: ${other.address} is in use by another process; stop it, or give admin.listen another port`);
    } finally {
      other.server.close();
    }
  });

  it('is bound before there is a daemon to serve: until then every path answers 503', async () => {
    admin = await startAdminServer({ listen: '127.0.0.1:0', maxLagMs: 60_000, logger: pino({ level: 'silent' }) });
    expect(await get('/healthz')).toMatchObject({ status: 503, body: 'the daemon is starting\n' });
    admin.serve(source());
    expect(await get('/healthz')).toMatchObject({ status: 200 });
  });

  it('at a reload: moves to a free address, stays where it is when the new one is in use, and takes the new health.max_lag', async () => {
    const logger = pino({ level: 'silent' });
    admin = await startAdminServer({ daemon: source({ lagSeconds: 90 }), listen: '127.0.0.1:0', maxLagMs: 60_000, logger });
    const first = admin.address;
    expect((await get('/readyz')).status).toBe(503);
    const other = await taken();
    try {
      const health = { max_lag: 120_000 } as never;
      await expect(adminForReload(admin, { admin: { listen: other.address }, health }, source(), logger)).rejects.toThrow(`admin.listen: ${other.address} is in use by another process`);
      expect(admin.address).toBe(first);
      expect((await get('/healthz')).status).toBe(200);
      expect(await adminForReload(admin, { admin: { listen: ':0' }, health }, source(), logger)).toBe(admin); // another port of 127.0.0.1
      expect(admin.address).not.toBe(first);
      expect((await get('/readyz')).status).toBe(200); // 90 s behind is within the new 2m
      await expect(fetch(`http://${first}/healthz`)).rejects.toThrow(); // the old address is let go
      expect(await adminForReload(admin, { admin: undefined, health }, source(), logger)).toBeUndefined();
      await expect(fetch(`http://${admin.address}/healthz`)).rejects.toThrow();
    } finally {
      other.server.close();
    }
  });
});
