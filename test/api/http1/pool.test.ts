// The service client's HTTP/1.1 pool against real TCP servers on loopback that answer with
// exactly the bytes each test writes: keep-alive reuse, the limit on connections, every
// body framing, every deadline, aborts, closing, and answers that break the protocol. Each
// exchange must end exactly once (a response or an error), and the pool must stay usable.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Http1Pool, type ExchangeControl, type Http1PoolOptions, type PoolRequest } from '../../../src/api/http1/pool.js';
import { mulberry32 } from '../../../src/simulator/prng.js';

interface Received {
  socket: Socket;
  /** Index of the connection it came on (0 = first accepted). */
  conn: number;
  head: string;
  body: string;
}

/** A TCP server that reads requests (head + Content-Length body) and lets the test answer. */
class RawServer {
  readonly server: Server;
  readonly sockets: Socket[] = [];
  readonly received: Received[] = [];
  closedSockets = 0;
  constructor(private readonly answer: (r: Received, server: RawServer) => void) {
    this.server = createServer((socket) => {
      const conn = this.sockets.push(socket) - 1;
      socket.on('close', () => this.closedSockets++);
      socket.on('error', () => {});
      let buf = Buffer.alloc(0);
      socket.on('data', (chunk) => {
        buf = Buffer.concat([buf, chunk]);
        for (;;) {
          const end = buf.indexOf('\r\n\r\n');
          if (end < 0) return;
          const head = buf.toString('latin1', 0, end);
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
          if (buf.length < end + 4 + length) return;
          const r = { socket, conn, head, body: buf.toString('utf8', end + 4, end + 4 + length) };
          buf = buf.subarray(end + 4 + length);
          this.received.push(r);
          this.answer(r, this);
        }
      });
    });
  }
  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

interface Outcome {
  status?: number;
  headers?: Record<string, string>;
  body: string;
  error?: Error & { code?: string };
  /** Callback names in order. */
  events: string[];
}

const OPTIONS: Http1PoolOptions = { connections: 4, connectMs: 2_000, headersMs: 2_000, bodyMs: 2_000 };
const REQ: PoolRequest = { method: 'POST', path: '/rest/model/logs/get/', headers: { authorization: 'tok-pool-7', 'content-type': 'application/json' }, body: '{"model_id":"m1"}' };
const ok = (body: string, extra = ''): string => `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function setup(answer: (r: Received, s: RawServer) => void, options: Partial<Http1PoolOptions> = {}): Promise<{ server: RawServer; pool: Http1Pool }> {
  const server = new RawServer(answer);
  const url = await server.listen();
  const pool = new Http1Pool(url, { ...OPTIONS, ...options });
  cleanup.push(() => server.close());
  cleanup.push(() => Promise.race([pool.close(), new Promise<void>((r) => setTimeout(r, 500))]));
  return { server, pool };
}

/** Sends `req`; resolves with what the handler heard once it ended. `hooks` may act on the control. */
function send(pool: Http1Pool, req: PoolRequest = REQ, hooks: { onStart?: (c: ExchangeControl) => void; onRequestStart?: (c: ExchangeControl) => void } = {}): Promise<Outcome> & { control: ExchangeControl } {
  let control!: ExchangeControl;
  const promise = new Promise<Outcome>((resolve) => {
    const out: Outcome = { body: '', events: [] };
    const chunks: Buffer[] = [];
    let ended = false;
    const end = (): void => {
      if (ended) out.events.push('AFTER-END');
      ended = true;
      out.body = Buffer.concat(chunks).toString('utf8');
      // Let any late callback show up in events before resolving.
      setTimeout(() => resolve(out), 20);
    };
    pool.dispatch(req, {
      onRequestStart(c) {
        control = c;
        out.events.push('requestStart');
        hooks.onRequestStart?.(c);
      },
      onResponseStart(c, status, headers) {
        out.events.push('responseStart');
        out.status = status;
        out.headers = headers;
        hooks.onStart?.(c);
      },
      onResponseData(_c, chunk) {
        out.events.push('data');
        chunks.push(Buffer.from(chunk));
      },
      onResponseEnd() {
        out.events.push('end');
        end();
      },
      onResponseError(_c, err) {
        out.events.push('error');
        out.error = err;
        end();
      },
    });
  });
  return Object.assign(promise, { control });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

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
    cleanup.push(() => server.close());
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
