//! The service client's connection pool: up to `connections` keep-alive HTTP/1.1
//! connections to one origin, requests queued while all are busy, one timer for every
//! deadline. It does the one thing the client needs (a POST with a small JSON body and its
//! whole response) at about two thirds of the CPU of a general-purpose client: at 10,000
//! models the daemon makes over a thousand requests a second, and they are most of its work.
import { isIP } from 'node:net';
import { Connection, Exchange, type ConnectionOwner, type ConnectionTarget, type ResponseHandler } from './connection.js';
import { HTTP_TOKEN } from '../../net/http-token.js';
import { TransportError } from './errors.js';

export type { ExchangeControl, ResponseHandler } from './connection.js';

/** Options of {@link Http1Pool}. */
export interface Http1PoolOptions {
  /** Most connections open at once. */
  connections: number;
  /** Most time to establish a connection (TCP and TLS). */
  connectMs: number;
  /** Most time from sending a request to the end of its response's head. */
  headersMs: number;
  /** Most time between two pieces of a response body. */
  bodyMs: number;
  /** How long an idle connection is kept when the service sends no `Keep-Alive: timeout`. Default 4 s. */
  keepAliveMs?: number;
  /** Authorities trusted for https (default: Node's). */
  ca?: string[];
  /** False turns certificate verification off. Default true. */
  rejectUnauthorized?: boolean;
}

/** A request to send. */
export interface PoolRequest {
  method: string;
  /** The request target: an absolute path. */
  path: string;
  /** Header fields besides Host and Content-Length, which the pool writes. */
  headers: Readonly<Record<string, string>>;
  body: string;
}

const PATH = /^\/[\x21-\x7e]*$/;
const BAD_VALUE = /[\0\r\n]/;
const OWN_FIELDS = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);

/** A keep-alive HTTP/1.1 client for one origin. */
export class Http1Pool implements ConnectionOwner {
  readonly target: ConnectionTarget;
  private readonly max: number;
  private readonly all = new Set<Connection>();
  /** Idle connections; the last one in is used first, so the others can expire. */
  private readonly idle: Connection[] = [];
  private readonly queue: Exchange[] = [];
  private readonly hostField: string;
  private timer: NodeJS.Timeout | undefined;
  private readonly tickMs: number;
  private closing: { promise: Promise<void>; resolve: () => void } | undefined;
  private lastHeaders: Readonly<Record<string, string>> | undefined;
  private lastFields = '';
  private readonly onAbort = (ex: Exchange, reason: Error): void => this.abortExchange(ex, reason);

  /** @param origin `http://host[:port]` or `https://host[:port]`. */
  constructor(origin: string, options: Http1PoolOptions) {
    const url = new URL(origin);
    const https = url.protocol === 'https:';
    if (!https && url.protocol !== 'http:') throw new Error(`not an http(s) origin: ${origin}`);
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    this.hostField = url.host;
    this.max = Math.max(1, Math.floor(options.connections));
    this.target = {
      host,
      port: url.port === '' ? (https ? 443 : 80) : Number(url.port),
      tls: https ? { servername: isIP(host) === 0 ? host : undefined, ca: options.ca, rejectUnauthorized: options.rejectUnauthorized ?? true } : undefined,
      connectMs: options.connectMs,
      headersMs: options.headersMs,
      bodyMs: options.bodyMs,
      keepAliveMs: options.keepAliveMs ?? 4_000,
    };
    // Deadlines are checked a few times per shortest one, at most once a second.
    const shortest = Math.min(options.connectMs, options.headersMs, options.bodyMs, this.target.keepAliveMs);
    this.tickMs = Math.min(1_000, Math.max(10, Math.floor(shortest / 4)));
  }

  /** Sends `req`; `handler` hears how it goes (its `onRequestStart` at once). */
  dispatch(req: PoolRequest, handler: ResponseHandler): void {
    let text = '';
    let refused: Error | undefined;
    if (this.closing) refused = new TransportError('MLS_HTTP_POOL_CLOSED', 'the client is closed');
    else {
      try {
        text = this.render(req);
      } catch (err) {
        refused = err as Error;
      }
    }
    const ex = new Exchange(this.onAbort, text, handler);
    handler.onRequestStart(ex);
    if (ex.finished) return;
    if (refused) {
      ex.finished = true;
      handler.onResponseError(ex, refused);
      return;
    }
    const conn = this.idle.pop();
    if (conn !== undefined) conn.send(ex);
    else if (this.all.size < this.max) this.open(ex);
    else this.queue.push(ex);
  }

  /** Waits for every request sent or queued, then closes the connections. Idempotent. */
  close(): Promise<void> {
    if (!this.closing) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.closing = { promise, resolve };
      this.settleClose();
    }
    return this.closing.promise;
  }

  released(conn: Connection): void {
    const next = this.queue.shift();
    if (next !== undefined) conn.send(next);
    else {
      this.idle.push(conn);
      this.settleClose();
    }
  }

  gone(conn: Connection): void {
    this.all.delete(conn);
    const i = this.idle.lastIndexOf(conn);
    if (i >= 0) this.idle.splice(i, 1);
    const next = this.all.size < this.max ? this.queue.shift() : undefined;
    if (next !== undefined) this.open(next);
    if (this.all.size === 0 && this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    this.settleClose();
  }

  private open(ex: Exchange): void {
    const conn = new Connection(this, ex);
    this.all.add(conn);
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.tick(), this.tickMs);
      this.timer.unref();
    }
  }

  private tick(): void {
    const now = performance.now();
    for (const conn of this.all) conn.check(now);
  }

  private abortExchange(ex: Exchange, reason: Error): void {
    if (ex.conn !== undefined) return ex.conn.abortExchange(ex, reason);
    const i = this.queue.indexOf(ex);
    if (i >= 0) this.queue.splice(i, 1);
    ex.finished = true;
    ex.handler.onResponseError(ex, reason);
    this.settleClose();
  }

  /** Once closing and nothing is outstanding: closes the idle connections. */
  private settleClose(): void {
    if (!this.closing || this.queue.length > 0 || this.idle.length < this.all.size) return;
    for (const conn of [...this.idle]) conn.shut();
    this.closing.resolve();
  }

  /** The request's bytes (as text): request line, fields, body. */
  private render(req: PoolRequest): string {
    if (!HTTP_TOKEN.test(req.method)) throw new Error(`not an HTTP method: ${JSON.stringify(req.method)}`);
    if (!PATH.test(req.path)) throw new Error(`not a request path: ${JSON.stringify(req.path)}`);
    // The client sends the same fields every time: rendered once per object.
    if (req.headers !== this.lastHeaders) {
      let fields = '';
      for (const [name, value] of Object.entries(req.headers)) {
        if (!HTTP_TOKEN.test(name) || OWN_FIELDS.has(name.toLowerCase())) throw new Error(`a header field the pool cannot send: ${JSON.stringify(name)}`);
        if (BAD_VALUE.test(value)) throw new Error(`the value of ${name} contains a line break or NUL`);
        fields += `${name}: ${value}\r\n`;
      }
      this.lastHeaders = req.headers;
      this.lastFields = fields;
    }
    return `${req.method} ${req.path} HTTP/1.1\r\nhost: ${this.hostField}\r\n${this.lastFields}content-length: ${Buffer.byteLength(req.body)}\r\n\r\n${req.body}`;
  }
}
