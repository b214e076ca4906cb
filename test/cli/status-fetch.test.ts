import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchStatus, statusUrl } from '../../src/cli/status-fetch.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A server on loopback answering /status with `answer`. */
async function admin(answer: (res: import('node:http').ServerResponse) => void): Promise<{ listen: string }> {
  const out = { listen: '' };
  const server = createServer((_req, res) => answer(res));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  out.listen = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return out;
}

describe('statusUrl', () => {
  it('asks an address of every interface on loopback', () => {
    expect(statusUrl('127.0.0.1:9464')).toBe('http://127.0.0.1:9464/status');
    expect(statusUrl(':9464')).toBe('http://127.0.0.1:9464/status');
    expect(statusUrl('0.0.0.0:9464')).toBe('http://127.0.0.1:9464/status');
    expect(statusUrl('[::]:9464')).toBe('http://[::1]:9464/status');
    expect(statusUrl('[::1]:9464')).toBe('http://[::1]:9464/status');
    expect(statusUrl('localhost:80')).toBe('http://localhost:80/status');
  });

  it('has none for what is not a listen address', () => {
    expect(statusUrl('9464')).toBeUndefined();
    expect(statusUrl('host:99999')).toBeUndefined();
  });
});

describe('fetchStatus', () => {
  it("returns the daemon's status, and nothing for an answer other than 200", async () => {
    const ok = await admin((res) => res.end(JSON.stringify({ models: [{ id: 'm1' }] })));
    expect(await fetchStatus(ok.listen)).toEqual({ models: [{ id: 'm1' }] });
    // A server listening on every interface is reached on loopback.
    const port = ok.listen.split(':')[1]!;
    expect(await fetchStatus(`:${port}`)).toEqual({ models: [{ id: 'm1' }] });
    expect(await fetchStatus(`0.0.0.0:${port}`)).toEqual({ models: [{ id: 'm1' }] });
    const unavailable = await admin((res) => {
      res.statusCode = 503;
      res.end('starting');
    });
    expect(await fetchStatus(unavailable.listen)).toBeUndefined();
  });

  it('rejects when nothing listens, and on an answer that is not JSON', async () => {
    const gone = await admin((res) => res.end('{}'));
    servers.pop()!.close();
    await expect(fetchStatus(gone.listen)).rejects.toThrow();
    const garbled = await admin((res) => res.end('<html>'));
    await expect(fetchStatus(garbled.listen)).rejects.toThrow(SyntaxError);
  });
});
