// The HTTP/1.1 pool when things go wrong, against real TCP servers on loopback: every
// deadline, refused and closed connections, aborts, closing the pool, and answers that
// break the protocol. Each exchange must end exactly once (a response or an error), and the
// pool must stay usable.
import { describe, expect, it } from 'vitest';
import { Http1Pool, type ExchangeControl } from '../../../src/api/http1/pool.js';
import { mulberry32 } from '../../../src/simulator/prng.js';
import { OPTIONS, RawServer, REQ, closeAfterEach, ok, onCleanup, send, setup, sleep } from './pool-fixture.js';

closeAfterEach();

describe('Http1Pool failures', () => {
  it('fails with MLS_HTTP_HEADERS_TIMEOUT when no response comes, and with MLS_HTTP_BODY_TIMEOUT when the body stalls', async () => {
    const { pool } = await setup((r, s) => {
      if (s.received.length === 2) r.socket.write('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhalf');
    }, { headersMs: 150, bodyMs: 150 });
    const t0 = performance.now();
    const silent = await send(pool);
    expect(silent.error?.code).toBe('MLS_HTTP_HEADERS_TIMEOUT');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
    expect(silent.events).toEqual(['requestStart', 'error']);
    const stalled = await send(pool);
    expect(stalled.error?.code).toBe('MLS_HTTP_BODY_TIMEOUT');
    expect(stalled.events).toEqual(['requestStart', 'responseStart', 'data', 'error']);
    expect(stalled.body).toBe('half');
  });

  it('fails with MLS_HTTP_CONNECT_TIMEOUT when the TLS handshake never completes', async () => {
    // A TCP server that accepts and never answers the TLS client hello.
    const server = new RawServer(() => {});
    const url = (await server.listen()).replace('http:', 'https:');
    onCleanup(() => server.close());
    const pool = new Http1Pool(url, { ...OPTIONS, connectMs: 150 });
    const out = await send(pool);
    expect(out.error?.code).toBe('MLS_HTTP_CONNECT_TIMEOUT');
    await pool.close();
  });

  it('fails with the socket error when the connection is refused', async () => {
    const server = new RawServer(() => {});
    const url = await server.listen();
    await server.close();
    const pool = new Http1Pool(url, OPTIONS);
    const out = await send(pool);
    expect(out.error?.code).toBe('ECONNREFUSED');
    expect(out.events).toEqual(['requestStart', 'error']);
    await pool.close();
  });

  it('fails with MLS_HTTP_CLOSED when the service closes before answering or in the middle of a body', async () => {
    const { pool } = await setup((r, s) => {
      if (s.received.length === 1) r.socket.destroy();
      else r.socket.end('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhalf');
    });
    const before = await send(pool);
    expect(before.error?.code).toBe('MLS_HTTP_CLOSED');
    expect(before.error?.message).toMatch(/without answering/);
    const during = await send(pool);
    expect(during.error?.code).toBe('MLS_HTTP_CLOSED');
    expect(during.events).toEqual(['requestStart', 'responseStart', 'data', 'error']);
  });

  it('fails with MLS_HTTP_BAD_RESPONSE on an answer that is not HTTP/1.1, and serves the next request on a new connection', async () => {
    const answers = ['HTTP/2 200\r\n\r\n', 'HTTP/1.1 200 OK\r\ncontent-length: 5, 6\r\n\r\nhello', 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n', 'HTTP/1.1 101 Switching Protocols\r\n\r\n', ok('fine')];
    const { server, pool } = await setup((r, s) => r.socket.write(answers[s.received.length - 1]!));
    for (let i = 0; i < 4; i++) {
      const out = await send(pool);
      expect(out.error?.code).toBe('MLS_HTTP_BAD_RESPONSE');
      expect(out.events.filter((e) => e === 'error')).toHaveLength(1);
    }
    expect((await send(pool)).body).toBe('fine');
    expect(server.sockets).toHaveLength(5);
  });

  it('reads a response with both Content-Length and chunked framing by its chunks, and then drops the connection', async () => {
    const { server, pool } = await setup((r) => r.socket.write('HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n4\r\nbody\r\n0\r\n\r\n'));
    expect((await send(pool)).body).toBe('body');
    expect((await send(pool)).body).toBe('body');
    expect(server.sockets).toHaveLength(2);
  });

  it('gives up a queued request at once on abort, without sending it', async () => {
    const { server, pool } = await setup((r) => setTimeout(() => r.socket.write(ok('first')), 100), { connections: 1 });
    const first = send(pool);
    let queued!: ExchangeControl;
    const second = send(pool, REQ, { onRequestStart: (c) => (queued = c) });
    queued.abort(new Error('stop'));
    const out = await second;
    expect(out.error?.message).toBe('stop');
    expect(out.events).toEqual(['requestStart', 'error']);
    expect((await first).body).toBe('first');
    await sleep(50);
    expect(server.received).toHaveLength(1);
  });

  it('closes the connection of a request aborted in flight, also from inside onResponseStart, and keeps serving', async () => {
    const { server, pool } = await setup((r, s) => {
      if (s.received.length === 1) return; // never answered: aborted below
      r.socket.write(ok('0123456789'));
    });
    let control!: ExchangeControl;
    const inFlight = send(pool, REQ, { onRequestStart: (c) => (control = c) });
    await sleep(50);
    control.abort(new Error('gone'));
    const out = await inFlight;
    expect(out.error?.message).toBe('gone');
    await sleep(30);
    expect(server.closedSockets).toBe(1);
    const cut = await send(pool, REQ, { onStart: (c) => c.abort(new Error('too large')) });
    expect(cut.events).toEqual(['requestStart', 'responseStart', 'error']);
    expect(cut.error?.message).toBe('too large');
    expect((await send(pool)).body).toBe('0123456789');
  });

  it('close() waits for requests sent and queued, then closes every connection; later requests fail with MLS_HTTP_POOL_CLOSED', async () => {
    const { server, pool } = await setup((r) => setTimeout(() => r.socket.write(ok(r.body)), 60), { connections: 1 });
    const a = send(pool, { ...REQ, body: 'a' });
    const b = send(pool, { ...REQ, body: 'b' });
    await pool.close();
    expect((await a).body).toBe('a');
    expect((await b).body).toBe('b');
    await sleep(30);
    expect(server.closedSockets).toBe(1);
    const late = await send(pool);
    expect(late.error?.code).toBe('MLS_HTTP_POOL_CLOSED');
  });

  it('refuses a header value with a line break without writing it, and a path that is not a plain absolute path', async () => {
    const { server, pool } = await setup((r) => r.socket.write(ok('x')));
    const bad = await send(pool, { ...REQ, headers: { authorization: 'secret-token\r\nx-injected: 1' } });
    expect(bad.error?.message).toBe('the value of authorization contains a line break or NUL');
    expect(bad.error?.message).not.toContain('secret');
    const badPath = await send(pool, { ...REQ, path: '/a b' });
    expect(badPath.error?.message).toMatch(/not a request path/);
    expect(server.received).toHaveLength(0);
  });

  it('ends every exchange exactly once on random answers, and still serves a valid one after them', async () => {
    // Seeded: the same answers on every run.
    const prng = mulberry32(0x5eed);
    const random = (): number => prng.next();
    const pieces = ['HTTP/1.1 ', '200 OK', '\r\n', 'content-length: ', '5', '3', 'transfer-encoding: chunked', '\r\n\r\n', '0\r\n', 'a\r\n', 'hello', '\n', ':', ' ', '\x00', 'HTTP/1.0 204 No Content', '-1', 'connection: close'];
    const answers: string[] = [];
    for (let i = 0; i < 200; i++) {
      let s = '';
      const n = 1 + Math.floor(random() * 12);
      for (let j = 0; j < n; j++) s += random() < 0.1 ? String.fromCharCode(Math.floor(random() * 256)) : pieces[Math.floor(random() * pieces.length)];
      answers.push(s);
    }
    // Each answer on its own connection, closed after it: whatever it says, the exchange must end.
    const { pool } = await setup((r, s) => r.socket.end(answers[s.received.length - 1] ?? ok('valid')), { headersMs: 300, bodyMs: 300, connections: 8 });
    const outs = await Promise.all(answers.map(() => send(pool)));
    for (const out of outs) {
      expect(out.events.filter((e) => e === 'end' || e === 'error')).toHaveLength(1);
      expect(out.events).not.toContain('AFTER-END');
    }
    const errors = outs.filter((o) => o.error).length;
    expect(errors).toBeGreaterThan(0);
    expect(errors).toBeLessThan(200);
    expect((await send(pool)).body).toBe('valid');
  });
});
