//! One keep-alive HTTP/1.1 connection to the service: one exchange at a time (no
//! pipelining), its response read as it arrives, and the connection handed back to its pool
//! once the response ended cleanly, or closed when it cannot be reused.
import { connect as netConnect, type Socket } from 'node:net';
import { BodyReader, type Framing } from './body-reader.js';
import { TransportError, badResponse } from './errors.js';
import { readResponseHead, type ResponseHead } from './response-head.js';

/** What an exchange's owner can do while it runs. */
export interface ExchangeControl {
  /** Gives up the exchange: `onResponseError(reason)` follows unless it already ended. */
  abort(reason: Error): void;
}

/** Callbacks of one exchange, in the order they come; after `onResponseEnd` or `onResponseError`, none. */
export interface ResponseHandler {
  onRequestStart(control: ExchangeControl): void;
  /** The final (non-1xx) response's status and header fields (names in lower case). */
  onResponseStart(control: ExchangeControl, status: number, headers: Record<string, string>): void;
  /** Body bytes: a view of a received buffer, valid as long as it is held. */
  onResponseData(control: ExchangeControl, chunk: Buffer): void;
  onResponseEnd(control: ExchangeControl): void;
  onResponseError(control: ExchangeControl, err: Error): void;
}

/** Where a connection goes and how long each of its phases may take. */
export interface ConnectionTarget {
  host: string;
  port: number;
  /** TLS options when the origin is https; `session` is the last one the service gave, offered again on the next connection. */
  tls: { servername: string | undefined; ca: string[] | undefined; rejectUnauthorized: boolean; session?: Buffer } | undefined;
  connectMs: number;
  headersMs: number;
  bodyMs: number;
  /** How long an idle connection is kept when the service sends no keep-alive hint. */
  keepAliveMs: number;
}

/** A connection's side of its pool. */
export interface ConnectionOwner {
  readonly target: ConnectionTarget;
  /** The connection finished an exchange and can take another. */
  released(conn: Connection): void;
  /** The connection closed (whatever the reason). */
  gone(conn: Connection): void;
}

/** One request: its bytes, its handler, and where it is. */
export class Exchange implements ExchangeControl {
  conn: Connection | undefined;
  finished = false;

  constructor(
    private readonly onAbort: (ex: Exchange, reason: Error) => void,
    readonly text: string,
    readonly handler: ResponseHandler,
  ) {}

  abort(reason: Error): void {
    if (!this.finished) this.onAbort(this, reason);
  }
}

// A server's `Keep-Alive: timeout=N` is trusted up to a second before it; idle connections are kept at most this long.
const KEEP_ALIVE_MARGIN_MS = 1_000;
const KEEP_ALIVE_MAX_MS = 600_000;

const enum Phase {
  Connect,
  Headers,
  Body,
  Idle,
}

/** One socket and the exchange on it. */
export class Connection {
  /** `performance.now()` past which the current phase has taken too long. */
  private deadline = Infinity;
  private phase = Phase.Connect;
  private readonly socket: Socket;
  private current: Exchange | undefined;
  /** Bytes of a response head not complete yet. */
  private head: Buffer | undefined;
  private reader: BodyReader | undefined;
  private reusable = true;
  private keepAliveMs: number;
  closed = false;
  private readonly onBody = (chunk: Buffer): void => {
    const ex = this.current;
    if (ex !== undefined) ex.handler.onResponseData(ex, chunk);
  };

  constructor(
    private readonly owner: ConnectionOwner,
    first: Exchange,
  ) {
    const t = owner.target;
    this.keepAliveMs = t.keepAliveMs;
    this.current = first;
    first.conn = this;
    this.deadline = performance.now() + t.connectMs;
    const common = { host: t.host, port: t.port, noDelay: true, keepAlive: true, keepAliveInitialDelay: 60_000 };
    const tls = t.tls;
    if (tls) {
      // Loaded here: `node:tls` costs ≈ 20 ms to load, and only https origins need it.
      this.socket = process.getBuiltinModule('node:tls').connect({
        ...common,
        ...(tls.servername ? { servername: tls.servername } : {}),
        ...(tls.ca ? { ca: tls.ca } : {}),
        ...(tls.session ? { session: tls.session } : {}),
        rejectUnauthorized: tls.rejectUnauthorized,
        ALPNProtocols: ['http/1.1'],
      });
      // Resuming the session spares a full handshake when a connection is opened again.
      this.socket.on('session', (session: Buffer) => (tls.session = session));
    } else this.socket = netConnect(common);
    this.socket.once(t.tls ? 'secureConnect' : 'connect', () => this.ready());
    this.socket.on('data', (chunk: Buffer) => this.onData(chunk));
    this.socket.on('end', () => this.onEnd());
    this.socket.on('error', (err) => this.fail(err));
    this.socket.on('close', () => this.fail(new TransportError('MLS_HTTP_CLOSED', 'the connection closed before the response ended')));
  }

  /** Sends `ex` on this idle connection. */
  send(ex: Exchange): void {
    this.current = ex;
    ex.conn = this;
    if (this.phase !== Phase.Connect) this.write();
  }

  /** Ends the exchange on this connection, if it is `ex`, with `reason`. */
  abortExchange(ex: Exchange, reason: Error): void {
    if (this.current === ex) this.fail(reason);
  }

  /** Fails the current phase if it has run past its deadline (an idle connection is closed). */
  check(now: number): void {
    if (now < this.deadline) return;
    const t = this.owner.target;
    switch (this.phase) {
      case Phase.Connect:
        return this.fail(new TransportError('MLS_HTTP_CONNECT_TIMEOUT', `no connection within ${t.connectMs} ms`));
      case Phase.Headers:
        return this.fail(new TransportError('MLS_HTTP_HEADERS_TIMEOUT', `no response within ${t.headersMs} ms`));
      case Phase.Body:
        return this.fail(new TransportError('MLS_HTTP_BODY_TIMEOUT', `no body bytes for ${t.bodyMs} ms`));
      case Phase.Idle:
        return this.shut();
    }
  }

  /** Closes the connection; an exchange on it fails. */
  shut(): void {
    if (this.closed) return;
    this.closed = true;
    this.deadline = Infinity;
    this.socket.destroy();
    this.owner.gone(this);
  }

  private ready(): void {
    if (this.current !== undefined) this.write();
    else this.idle();
  }

  private write(): void {
    this.phase = Phase.Headers;
    this.deadline = performance.now() + this.owner.target.headersMs;
    this.socket.write(this.current!.text);
  }

  private idle(): void {
    this.phase = Phase.Idle;
    this.deadline = performance.now() + this.keepAliveMs;
  }

  /** Ends the current exchange with `err` and closes the connection. */
  private fail(err: Error): void {
    const ex = this.current;
    this.current = undefined;
    this.shut();
    if (ex === undefined) return;
    ex.finished = true;
    ex.handler.onResponseError(ex, err);
  }

  private onData(chunk: Buffer): void {
    // Bytes that answer no request: the connection's framing is lost.
    if (this.current === undefined) return this.shut();
    if (this.phase === Phase.Body) this.deadline = performance.now() + this.owner.target.bodyMs;
    try {
      this.consume(chunk);
    } catch (err) {
      this.fail(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private onEnd(): void {
    // The service closed its side: that ends a body read until close, and cuts anything else short.
    if (this.current !== undefined && this.reader?.endsAtClose()) {
      this.reusable = false;
      this.complete(false);
    } else this.fail(new TransportError('MLS_HTTP_CLOSED', this.phase === Phase.Body ? 'the connection closed before the response ended' : 'the service closed the connection without answering'));
  }

  private consume(chunk: Buffer): void {
    let buf = chunk;
    let at = 0;
    for (;;) {
      const ex = this.current;
      if (ex === undefined) return;
      if (this.reader === undefined) {
        if (this.head !== undefined) {
          buf = Buffer.concat([this.head, at === 0 ? buf : buf.subarray(at)]);
          at = 0;
          this.head = undefined;
        }
        const head = readResponseHead(buf, at);
        if (head === undefined) {
          this.head = at === 0 ? buf : buf.subarray(at);
          return;
        }
        at = head.end;
        if (head.status < 200) {
          if (head.status === 101) throw badResponse('101 Switching Protocols to a request that asked for no upgrade');
          continue; // 100 Continue, 103 Early Hints…: the final response follows
        }
        this.startBody(head);
        this.phase = Phase.Body;
        this.deadline = performance.now() + this.owner.target.bodyMs;
        ex.handler.onResponseStart(ex, head.status, head.headers);
        if (this.current !== ex) return; // given up from the callback
      }
      at = this.reader!.feed(buf, at, this.onBody);
      if (this.current !== ex || !this.reader!.done) return;
      // Bytes after a complete response, with no request outstanding: not HTTP/1.1.
      if (at < buf.length) this.reusable = false;
      return this.complete(true);
    }
  }

  private startBody(head: ResponseHead): void {
    const h = head.headers;
    const framing = framingOf(head);
    this.reader = new BodyReader(framing);
    this.reusable =
      head.minorVersion === 1 &&
      framing.kind !== 'close' &&
      // Both framings at once is how responses get smuggled: read it, then drop the connection.
      !(h['transfer-encoding'] !== undefined && h['content-length'] !== undefined) &&
      !hasToken(h.connection, 'close');
    const hint = /timeout\s*=\s*(\d+)/i.exec(h['keep-alive'] ?? '');
    if (hint !== null) {
      const ms = Number(hint[1]) * 1000 - KEEP_ALIVE_MARGIN_MS;
      if (ms <= 0) this.reusable = false;
      else this.keepAliveMs = Math.min(ms, KEEP_ALIVE_MAX_MS);
    }
  }

  /** The current response ended: hand it over, then reuse or close the connection. */
  private complete(open: boolean): void {
    const ex = this.current!;
    this.current = undefined;
    this.reader = undefined;
    ex.finished = true;
    if (open && this.reusable) this.idle();
    else this.shut();
    ex.handler.onResponseEnd(ex);
    if (!this.closed) this.owner.released(this);
  }
}

/** How the body after `head` is delimited (RFC 9112 §6.3). */
function framingOf(head: ResponseHead): Framing {
  if (head.status === 204 || head.status === 304) return { kind: 'length', bytes: 0 };
  const te = head.headers['transfer-encoding'];
  if (te !== undefined) {
    const codings = te.split(',');
    return codings[codings.length - 1]!.trim().toLowerCase() === 'chunked' ? { kind: 'chunked' } : { kind: 'close' };
  }
  const cl = head.headers['content-length'];
  if (cl === undefined) return { kind: 'close' };
  const values = cl.split(',').map((v) => v.trim());
  if (!values.every((v) => /^\d{1,15}$/.test(v) && v === values[0])) throw badResponse(`Content-Length ${JSON.stringify(cl.slice(0, 64))}`);
  return { kind: 'length', bytes: Number(values[0]) };
}

function hasToken(value: string | undefined, token: string): boolean {
  return value !== undefined && value.split(',').some((t) => t.trim().toLowerCase() === token);
}
