//! A real HTTP webhook receiver for tests, on 127.0.0.1 with an ephemeral port: it
//! records every request, can fail, hang or go down (and come back on the same port),
//! checks the HMAC signature, and dedupes deliveries by Idempotency-Key.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** One object of a webhook body. */
export interface ReceivedEntry {
  model_id: string;
  time: string;
  stream: string;
  log: string;
  [key: string]: unknown;
}

/** One request as the receiver saw it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body bytes as sent (compressed when Content-Encoding says so). */
  raw: Buffer;
  /** The body decompressed, as text. */
  text: string;
  /** The parsed objects (NDJSON lines or the JSON array), empty when unparseable. */
  entries: ReceivedEntry[];
  idempotencyKey: string | undefined;
  /** Whether the signature verified; undefined when the receiver has no secret. */
  signatureValid: boolean | undefined;
  /** The status the receiver answered. */
  status: number;
}

/** Options of {@link startWebhookReceiver}. */
export interface WebhookReceiverOptions {
  /** When set, requests must carry a valid X-MLS-Signature; others get 401. */
  secret?: string;
  /** Signatures older than this many seconds are refused (default 300). */
  toleranceSeconds?: number;
  /** Status of a successful request (default 200). */
  okStatus?: number;
}

/** A running receiver. */
export interface WebhookReceiver {
  /** Base URL, e.g. http://127.0.0.1:12345/hook. Stays valid across stop()/restart(). */
  readonly url: string;
  readonly port: number;
  /** Every request received, in order, including failed ones. */
  readonly requests: ReceivedRequest[];
  /** Entries of every accepted (2xx) request, repeats included. */
  entries(): ReceivedEntry[];
  /** Entries of accepted requests, counting each Idempotency-Key once. */
  uniqueEntries(): ReceivedEntry[];
  /** Answers `status` to the next `count` requests (Infinity: until {@link recover}). */
  failNext(status: number, count: number, retryAfter?: string, body?: string): void;
  /** Stops failing. */
  recover(): void;
  /** Delays every answer by `ms` (0 to stop). */
  setDelay(ms: number): void;
  /** Goes down: closes the listening socket and every connection. */
  stop(): Promise<void>;
  /** Comes back on the same port. */
  restart(): Promise<void>;
  /** Stops for good. */
  close(): Promise<void>;
}

/**
 * Verifies an `X-MLS-Signature` header the way a receiver should: split `t` and `v1`,
 * recompute HMAC-SHA256(secret, "<t>.<raw body>") in hex, compare in constant time, and
 * refuse timestamps outside the tolerance.
 */
export function verifySignature(secret: string, rawBody: Buffer, header: string | undefined, nowSeconds = Date.now() / 1000, toleranceSeconds = 300): boolean {
  if (!header) return false;
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = Number(parts.t);
  const v1 = parts.v1;
  if (!Number.isInteger(t) || typeof v1 !== 'string' || !/^[0-9a-f]{64}$/.test(v1)) return false;
  if (Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(v1, 'hex'));
}

function parseEntries(text: string, contentType: string | undefined): ReceivedEntry[] {
  try {
    if (contentType?.startsWith('application/json')) return JSON.parse(text) as ReceivedEntry[];
    return text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as ReceivedEntry);
  } catch {
    return [];
  }
}

/** Starts a receiver at 127.0.0.1:0 (path /hook). */
export async function startWebhookReceiver(opts: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  let failStatus = 0;
  let failLeft = 0;
  let failRetryAfter: string | undefined;
  let failBody: string | undefined;
  let delayMs = 0;
  const timers = new Set<NodeJS.Timeout>();

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let text: string;
      try {
        text = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw).toString('utf8') : raw.toString('utf8');
      } catch {
        text = '';
      }
      const signatureValid =
        opts.secret === undefined ? undefined : verifySignature(opts.secret, raw, req.headers['x-mls-signature'] as string | undefined, Date.now() / 1000, opts.toleranceSeconds);
      let status = opts.okStatus ?? 200;
      const headers: Record<string, string> = {};
      let body = '';
      if (failLeft > 0) {
        failLeft--;
        status = failStatus;
        if (failRetryAfter !== undefined) headers['retry-after'] = failRetryAfter;
        body = failBody ?? `failing on purpose with ${failStatus}`;
      } else if (signatureValid === false) {
        status = 401;
        body = 'bad signature';
      }
      const record: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        raw,
        text,
        entries: parseEntries(text, req.headers['content-type']),
        idempotencyKey: req.headers['idempotency-key'] as string | undefined,
        signatureValid,
        status,
      };
      const answer = () => {
        requests.push(record);
        res.writeHead(status, headers).end(body);
      };
      if (delayMs > 0) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (!res.destroyed) answer();
        }, delayMs);
        timers.add(timer);
      } else {
        answer();
      }
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const shut = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
      for (const t of timers) clearTimeout(t);
      timers.clear();
    });

  await listen(0);
  const port = (server.address() as AddressInfo).port;
  const accepted = () => requests.filter((r) => r.status >= 200 && r.status < 300);

  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    requests,
    entries: () => accepted().flatMap((r) => r.entries),
    uniqueEntries: () => {
      const seen = new Set<string>();
      const out: ReceivedEntry[] = [];
      for (const r of accepted()) {
        if (r.idempotencyKey !== undefined) {
          if (seen.has(r.idempotencyKey)) continue;
          seen.add(r.idempotencyKey);
        }
        out.push(...r.entries);
      }
      return out;
    },
    failNext(status, count, retryAfter, body) {
      failStatus = status;
      failLeft = count;
      failRetryAfter = retryAfter;
      failBody = body;
    },
    recover() {
      failLeft = 0;
    },
    setDelay(ms) {
      delayMs = ms;
    },
    stop: shut,
    restart: () => listen(port),
    close: shut,
  };
}
