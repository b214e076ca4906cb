//! Small real HTTP servers on 127.0.0.1 for the client and command tests.
import { ApiError, ApiProtocolError } from '../../src/api/errors.js';
import { expect } from 'vitest';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';

/** A request as the server received it. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** Index of the TCP connection it came on (0 for the first connection). */
  connection: number;
}

/** Handles request number `index` (0-based); it may write anything, or nothing. */
export type Handler = (req: RecordedRequest, res: ServerResponse, index: number) => void | Promise<void>;

export interface TestServer {
  /** `http://127.0.0.1:<port>` without a trailing slash. */
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Starts a server on an ephemeral port. */
export async function startServer(handler: Handler): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  let connections = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const socket = req.socket as typeof req.socket & { testIndex?: number };
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        connection: socket.testIndex ?? -1,
      };
      const index = requests.length;
      requests.push(recorded);
      Promise.resolve(handler(recorded, res, index)).catch((err: unknown) => {
        res.destroy(err as Error);
      });
    });
  });
  server.on('connection', (socket: import('node:net').Socket & { testIndex?: number }) => {
    socket.testIndex = connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers with a JSON body. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** A successful logs page. */
export function logsPage(entries: { time: string; log: string; stream: string }[], nextToken?: string | null): Record<string, unknown> {
  const body: Record<string, unknown> = { status: 'success', details: entries };
  if (nextToken !== undefined) body.next_token = nextToken;
  return body;
}

/** A writable that keeps everything written to it. */
export class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.text += chunk.toString();
    cb();
  }
}

export const TOKEN = 'tok-SECRET-123';

/** Awaits a promise that must fail with an ApiError, and returns the error. */
export async function failure(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected the request to fail');
}

/** The ApiProtocolError that `fn` throws; fails the test when it throws anything else or nothing. */
export function protocolError(fn: () => unknown): ApiProtocolError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiProtocolError);
    return err as ApiProtocolError;
  }
  throw new Error('expected a protocol error');
}
