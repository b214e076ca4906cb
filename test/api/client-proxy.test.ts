//! The service client through a real proxy on 127.0.0.1: from the environment, from its
//! `proxy` option (which overrides the environment), bypassed with `false` (`proxy: none`)
//! and by NO_PROXY; an https service through a CONNECT tunnel; the proxy's credentials
//! sent as Proxy-Authorization and shown nowhere.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiUnavailableError } from '../../src/api/errors.js';
import { HAS_OPENSSL, makeCa } from '../helpers/certs.js';
import { startProxy, type TestProxy } from '../helpers/proxy.js';
import { Capture, failure, logsPage, sendJson } from './helpers.js';
import { client, closeAfterEach, ENTRY, ONE_ATTEMPT, REQ, serve } from './client-fixture.js';

closeAfterEach();

let proxies: TestProxy[] = [];
afterEach(async () => {
  vi.unstubAllEnvs();
  await Promise.all(proxies.map((p) => p.close()));
  proxies = [];
});

async function proxy(credentials?: { user: string; password: string }): Promise<TestProxy> {
  const p = await startProxy(credentials);
  proxies.push(p);
  return p;
}

/** No proxy variable set but those given. */
function environment(vars: Record<string, string> = {}): void {
  for (const name of ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY']) vi.stubEnv(name, vars[name]);
}

const LOGS_PATH = '/rest/model/logs/get/';

describe('the service client behind a proxy', () => {
  it('goes through HTTP_PROXY from the environment', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, logsPage([ENTRY])));
    const p = await proxy();
    environment({ HTTP_PROXY: p.url });
    const page = await client(s.url).getLogs(REQ);
    expect(page.entries).toEqual([ENTRY]);
    expect(p.uses.map((u) => u.what)).toEqual([`FORWARD ${s.url}${LOGS_PATH}`]);
    expect(s.requests).toHaveLength(1);
  });

  it('goes through its proxy option rather than the environment, sending the credentials as Proxy-Authorization', async () => {
    const s = await serve((req, res) => sendJson(res, 200, req.url.includes('settings') ? { status: 'success', details: 'Model updated.' } : logsPage([ENTRY])));
    const envProxy = await proxy();
    const p = await proxy({ user: 'mls', password: 'pr0xy-pass-5d1e' });
    environment({ HTTP_PROXY: envProxy.url });
    const c = client(s.url, { proxy: p.urlWith('mls', 'pr0xy-pass-5d1e') });
    expect(await c.updateSettings('m-1', { min_replica: 1 })).toEqual({ details: 'Model updated.' });
    expect((await c.getLogs(REQ)).entries).toEqual([ENTRY]);
    expect(envProxy.uses).toEqual([]);
    expect(p.uses.map((u) => u.authorization)).toEqual([`Basic ${Buffer.from('mls:pr0xy-pass-5d1e').toString('base64')}`, `Basic ${Buffer.from('mls:pr0xy-pass-5d1e').toString('base64')}`]);
    // the proxy's credentials are for the proxy: the service never sees them
    expect(s.requests.map((r) => r.headers['proxy-authorization'])).toEqual([undefined, undefined]);
  });

  it('connects directly with proxy none, and for a host NO_PROXY names', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, logsPage([ENTRY])));
    const p = await proxy();
    environment({ HTTP_PROXY: p.url });
    await client(s.url, { proxy: false }).getLogs(REQ);
    environment({ HTTP_PROXY: p.url, NO_PROXY: 'example.test,127.0.0.1' });
    await client(s.url).getLogs(REQ);
    expect(p.uses).toEqual([]);
    expect(s.requests).toHaveLength(2);
  });

  it('reaches an https service through a CONNECT tunnel, trusting its ca_file', { skip: !HAS_OPENSSL }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mls-proxy-tls-'));
    const ca = makeCa(dir, 'svc');
    const server = createHttpsServer(ca.server, (req, res) => req.resume().on('end', () => sendJson(res, 200, logsPage([ENTRY]))));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const p = await proxy();
      environment({ HTTPS_PROXY: p.url });
      const page = await client(`https://127.0.0.1:${port}`, { caFile: ca.certFile }).getLogs(REQ);
      expect(page.entries).toEqual([ENTRY]);
      expect(p.uses.map((u) => u.what)).toEqual([`CONNECT 127.0.0.1:${port}`]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says which proxy refused it, and shows its credentials nowhere', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, logsPage([ENTRY])));
    const p = await proxy({ user: 'mls', password: 'right-pass-8c2f' });
    const lines = new Capture();
    const logger = pino({ level: 'debug' }, lines);
    const err = await failure(client(s.url, { ...ONE_ATTEMPT, logger, proxy: p.urlWith('mls', 'wrong-pass-41aa') }).getLogs(REQ));
    expect(err).toBeInstanceOf(ApiUnavailableError);
    expect(err.message).toContain(`through the proxy ${p.url}`);
    expect(err.message).toMatch(/407/);
    const texts = [err.message, String(err), JSON.stringify(err), err.stack ?? '', lines.text];
    for (let cur = (err as { cause?: unknown }).cause; cur instanceof Error; cur = (cur as { cause?: unknown }).cause) texts.push(cur.message);
    for (const t of texts) {
      expect(t).not.toContain('wrong-pass-41aa');
      expect(t).not.toContain(Buffer.from('mls:wrong-pass-41aa').toString('base64'));
    }
    expect(s.requests).toHaveLength(0);
  });
});
