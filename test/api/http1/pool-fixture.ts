//! The HTTP/1.1 pool's tests' parts: a TCP server on loopback that answers with exactly the
//! bytes a test writes, and an exchange whose every callback is recorded.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { Http1Pool, type ExchangeControl, type Http1PoolOptions, type PoolRequest } from '../../../src/api/http1/pool.js';

/** A request as the server read it. */
export interface Received {
  socket: Socket;
  /** Index of the connection it came on (0 = first accepted). */
  conn: number;
  head: string;
  body: string;
}

/** A TCP server that reads requests (head + Content-Length body) and lets the test answer. */
export class RawServer {
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

/** What the handler of one exchange heard. */
export interface Outcome {
  status?: number;
  headers?: Record<string, string>;
  body: string;
  error?: Error & { code?: string };
  /** Callback names in order. */
  events: string[];
}

export const OPTIONS: Http1PoolOptions = { connections: 4, connectMs: 2_000, headersMs: 2_000, bodyMs: 2_000 };
export const REQ: PoolRequest = { method: 'POST', path: '/rest/model/logs/get/', headers: { authorization: 'tok-pool-7', 'content-type': 'application/json' }, body: '{"model_id":"m1"}' };
/** A 200 response with a Content-Length body. */
export const ok = (body: string, extra = ''): string => `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

const cleanup: Array<() => Promise<void>> = [];
/** Runs `f` after the test (in reverse order of registration). */
export function onCleanup(f: () => Promise<void>): void {
  cleanup.push(f);
}

/** Closes the servers and pools that {@link setup} made after each test of the file that calls it. */
export function closeAfterEach(): void {
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });
}

/** A server answering with `answer`, and a pool to it. */
export async function setup(answer: (r: Received, s: RawServer) => void, options: Partial<Http1PoolOptions> = {}): Promise<{ server: RawServer; pool: Http1Pool }> {
  const server = new RawServer(answer);
  const url = await server.listen();
  const pool = new Http1Pool(url, { ...OPTIONS, ...options });
  cleanup.push(() => server.close());
  cleanup.push(() => Promise.race([pool.close(), new Promise<void>((r) => setTimeout(r, 500))]));
  return { server, pool };
}

/** Sends `req`; resolves with what the handler heard once it ended. `hooks` may act on the control. */
export function send(pool: Http1Pool, req: PoolRequest = REQ, hooks: { onStart?: (c: ExchangeControl) => void; onRequestStart?: (c: ExchangeControl) => void } = {}): Promise<Outcome> & { control: ExchangeControl } {
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

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
