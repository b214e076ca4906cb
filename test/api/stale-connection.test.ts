//! A service that closes its keep-alive connections without saying so (no `Connection:
//! close`): a request that goes out on such a connection is cut off before any byte of its
//! answer, and is sent again at once, once, with no backoff and no warning.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Capture, logsPage } from './helpers.js';
import { client, closeAfterEach, ENTRY, REQ } from './client-fixture.js';

closeAfterEach();

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/**
 * A raw HTTP/1.1 service that answers the first request of each connection with a page
 * chained to the next (`next_token` n+1, up to `pages`), then drops the connection when
 * the next request arrives on it. Counts requests and connections.
 */
async function closingService(pages: number): Promise<{ url: string; requests: () => number; connections: () => number }> {
  let requests = 0;
  let connections = 0;
  server = createServer((socket: Socket) => {
    connections++;
    let answered = false;
    let buffered = '';
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length: *(\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0);
      if (buffered.length < end + 4 + length) return;
      requests++;
      if (answered) {
        socket.destroy(); // the server had closed this connection while the request was on its way
        return;
      }
      answered = true;
      const token = (JSON.parse(buffered.slice(end + 4, end + 4 + length)) as { next_token?: string }).next_token;
      const n = token === undefined ? 1 : Number(token) + 1;
      const body = JSON.stringify(logsPage([{ ...ENTRY, log: `page ${n}` }], n < pages ? String(n) : null));
      buffered = '';
      socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests, connections: () => connections };
}

describe('a service that closes connections without saying so', () => {
  it('150 chained pages are read with no failed attempt, no retry and no warning', { timeout: 60_000 }, async () => {
    const service = await closingService(150);
    const lines = new Capture();
    const attempts: string[] = [];
    const retries: unknown[] = [];
    const c = client(service.url, {
      logger: pino({ level: 'debug' }, lines),
      observer: { onAttempt: (a) => attempts.push(String(a.status)), onRetry: (r) => retries.push(r) },
      // a retry would wait at least a second: the test would see it
      retry: { deadlineMs: 60_000, baseDelayMs: 1_000, maxDelayMs: 1_000 },
      // This service's closes never arrive until the next request does, so every idle
      // connection is stale; a real one's close arrives a moment after its answer, and only
      // the connection just used can still be stale. One connection is what a chain of
      // pages then meets.
      connections: 1,
    });
    const logs: string[] = [];
    let token: string | undefined;
    do {
      const page = await c.getLogs({ ...REQ, ...(token !== undefined ? { nextToken: token } : {}) });
      logs.push(...page.entries.map((e) => e.log));
      token = page.nextToken;
    } while (token !== undefined);
    expect(logs).toEqual(Array.from({ length: 150 }, (_, i) => `page ${i + 1}`));
    expect(attempts.every((s) => s === '200')).toBe(true);
    expect(attempts).toHaveLength(150);
    expect(retries).toEqual([]);
    expect(lines.text).toBe('');
    // every request after the first went out on a reused connection first, and again on a new one
    expect(service.connections()).toBe(150);
    expect(service.requests()).toBe(150 + 149);
  });
});
