// The service client's HTTP/1.1 pool against real TCP servers on loopback that answer with
// exactly the bytes each test writes: keep-alive reuse, the limit on connections, every
// body framing, idle connections. Failures are in pool-failures.test.ts.
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { REQ, closeAfterEach, ok, send, setup, sleep } from './pool-fixture.js';

closeAfterEach();

describe('Http1Pool', () => {
  it('writes the request as HTTP/1.1 with Host and Content-Length, and reuses one connection for requests in turn', async () => {
    const { server, pool } = await setup((r) => r.socket.write(ok(`{"n":${server.received.length}}`)));
    const port = (server.server.address() as AddressInfo).port;
    for (let i = 1; i <= 10; i++) {
      const out = await send(pool, { ...REQ, body: `{"model_id":"m${i}","x":"é"}` });
      expect(out.events).toEqual(['requestStart', 'responseStart', 'data', 'end']);
      expect(out.status).toBe(200);
      expect(out.headers).toMatchObject({ 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(out.body)) });
      expect(out.body).toBe(`{"n":${i}}`);
    }
    expect(server.sockets).toHaveLength(1);
    expect(server.received[0]!.head).toBe(`POST /rest/model/logs/get/ HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: tok-pool-7\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength('{"model_id":"m1","x":"é"}')}`);
    expect(server.received[9]!.body).toBe('{"model_id":"m10","x":"é"}');
  });

  it('opens at most `connections` connections and queues the rest until one is free', async () => {
    const { server, pool } = await setup((r) => setTimeout(() => r.socket.write(ok(r.body)), 50), { connections: 2 });
    const outs = await Promise.all(Array.from({ length: 7 }, (_, i) => send(pool, { ...REQ, body: `{"i":${i}}` })));
    expect(outs.map((o) => o.body)).toEqual(Array.from({ length: 7 }, (_, i) => `{"i":${i}}`));
    expect(server.sockets).toHaveLength(2);
    expect(new Set(server.received.map((r) => r.conn))).toEqual(new Set([0, 1]));
  });

  it('reads a chunked body written in pieces, with a 100 Continue before the response and trailers after it', async () => {
    const { server, pool } = await setup(async (r) => {
      const parts = ['HTTP/1.1 100 Continue\r\n\r\n', 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n', '5\r\nhel', 'lo\r\n', '6;ext=1\r\n world\r\n0\r\n', 'x-trailer: 1\r\n\r\n'];
      for (const p of parts) {
        r.socket.write(p);
        await sleep(10);
      }
    });
    const out = await send(pool);
    expect(out.status).toBe(200);
    expect(out.body).toBe('hello world');
    expect(out.events.filter((e) => e === 'responseStart')).toHaveLength(1);
    expect(out.events.at(-1)).toBe('end');
    // The connection is reusable after the trailers.
    expect((await send(pool)).body).toBe('hello world');
    expect(server.sockets).toHaveLength(1);
  });

  it('reads a body delimited by the connection closing, and does not reuse that connection', async () => {
    const { server, pool } = await setup((r) => {
      r.socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nuntil ');
      setTimeout(() => r.socket.end('close'), 20);
    });
    expect((await send(pool)).body).toBe('until close');
    expect((await send(pool)).body).toBe('until close');
    expect(server.sockets).toHaveLength(2);
  });

  it('opens a new connection after `Connection: close`, after HTTP/1.0, and after bytes beyond a complete response', async () => {
    const answers = [ok('a', 'connection: close\r\n'), 'HTTP/1.0 200 OK\r\ncontent-length: 1\r\n\r\nb', `${ok('c')}junk`, ok('d')];
    const { server, pool } = await setup((r, s) => r.socket.write(answers[s.received.length - 1]!));
    const bodies = [];
    for (let i = 0; i < 4; i++) bodies.push((await send(pool)).body);
    expect(bodies).toEqual(['a', 'b', 'c', 'd']);
    expect(server.received.map((r) => r.conn)).toEqual([0, 1, 2, 3]);
  });

  it('drops a connection the service closed while it was idle, and sends the next request on a new one', async () => {
    const { server, pool } = await setup((r) => {
      r.socket.write(ok('x'));
      setTimeout(() => r.socket.end(), 20);
    });
    expect((await send(pool)).body).toBe('x');
    await sleep(100);
    const out = await send(pool);
    expect(out.error).toBeUndefined();
    expect(out.body).toBe('x');
    expect(server.sockets).toHaveLength(2);
  });

  it('drops an idle connection on which the service sends bytes nobody asked for', async () => {
    const { server, pool } = await setup((r, s) => {
      r.socket.write(ok('y'));
      if (s.received.length === 1) setTimeout(() => r.socket.write(ok('unasked')), 20);
    });
    expect((await send(pool)).body).toBe('y');
    await sleep(100);
    expect(server.closedSockets).toBe(1);
    expect((await send(pool)).body).toBe('y');
    expect(server.sockets).toHaveLength(2);
  });

  it('closes an idle connection after keepAliveMs, and at once when the service allows less than a second more', async () => {
    const { server, pool } = await setup((r, s) => r.socket.write(ok('k', s.received.length === 2 ? 'keep-alive: timeout=1\r\n' : '')), { keepAliveMs: 100 });
    await send(pool);
    await sleep(40);
    expect(server.closedSockets).toBe(0);
    await sleep(400);
    expect(server.closedSockets).toBe(1);
    await send(pool);
    await sleep(60);
    expect(server.closedSockets).toBe(2);
  });
});
