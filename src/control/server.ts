//! The daemon's side of the control channel (protocol.ts): listens on the Unix socket
//! beside the state file, created with mode 0600 so that only the daemon's user (and root)
//! can connect, and runs each request with the handler of its operation.
import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { MlsError, StateError, describeError } from '../errors.js';
import { scrubSecrets } from '../telemetry/secrets.js';
import { CONTROL_OPS, CONTROL_VERSION, MAX_HELD_ANSWER_BYTES, MAX_REQUEST_BYTES, MAX_SOCKET_PATH_BYTES, type ControlAnswer, type ControlOp } from './protocol.js';

/** How long a stop waits for a client to take its last answer before its connection is cut. */
const LAST_ANSWER_GRACE_MS = 1_000;

/**
 * Runs one operation: `emit` sends an event to the client, or returns false without sending
 * it when the client is not reading what it was sent (over {@link MAX_HELD_ANSWER_BYTES}
 * wait); the result ends the request.
 */
export type ControlHandler = (args: unknown, emit: (data: unknown) => boolean, signal: AbortSignal) => Promise<unknown>;

/** A listening control channel. */
export interface ControlServer {
  readonly path: string;
  /**
   * Stops accepting requests, stops the running ones (their signal fires) and waits for them,
   * ends every connection (a client that connected and sent nothing too), removes the
   * socket. Idempotent.
   */
  close(): Promise<void>;
}

/** Options of {@link startControlServer}. */
export interface ControlServerOptions {
  path: string;
  handlers: Readonly<Record<ControlOp, ControlHandler>>;
  logger: Logger;
}

/**
 * Starts listening on `path`. The caller holds the state file's lock, so a socket file
 * found there is a dead daemon's and is replaced.
 * @throws StateError when the path is too long for a Unix socket or cannot be bound.
 */
export async function startControlServer(o: ControlServerOptions): Promise<ControlServer> {
  if (Buffer.byteLength(o.path) > MAX_SOCKET_PATH_BYTES) {
    throw new StateError('MLS_ERR_STATE_OPEN', `the control socket path ${o.path} is longer than the ${MAX_SOCKET_PATH_BYTES} bytes a Unix socket path may have; give state.path a shorter path`);
  }
  removeStaleSocket(o.path);
  const stop = new AbortController();
  const running = new Set<Promise<void>>();
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const done = serve(socket, o, stop.signal).catch((err: unknown) => o.logger.warn({ err: describeError(err) }, 'control request failed'));
    running.add(done);
    void done.finally(() => running.delete(done));
  });
  // Created with mode 0600 from the start: no moment in which another user could connect.
  const umask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(o.path, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    throw new StateError('MLS_ERR_STATE_OPEN', `cannot listen on the control socket ${o.path}: ${describeError(err)}`, { cause: err });
  } finally {
    process.umask(umask);
  }
  chmodSync(o.path, 0o600);
  let closing: Promise<void> | undefined;
  return {
    path: o.path,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        stop.abort();
        await Promise.allSettled([...running]);
        // Every answer is written by now; a client that does not close its end would hold the
        // close, and so would one that does not read what is still to be sent to it (a stalled tap).
        for (const socket of sockets) socket.destroySoon();
        const cut = setTimeout(() => {
          for (const socket of sockets) socket.destroy();
        }, LAST_ANSWER_GRACE_MS);
        await closed;
        clearTimeout(cut);
        try {
          unlinkSync(o.path);
        } catch {
          // already gone (server.close removes it on some systems)
        }
      })();
      return closing;
    },
  };
}

function removeStaleSocket(path: string): void {
  let isSocket: boolean;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch {
    return; // nothing there
  }
  if (!isSocket) throw new StateError('MLS_ERR_STATE_OPEN', `${path} exists and is not a socket; remove it (mls keeps its control socket there)`);
  unlinkSync(path);
}

async function serve(socket: Socket, o: ControlServerOptions, stopping: AbortSignal): Promise<void> {
  const send = (a: ControlAnswer): boolean => {
    if (socket.destroyed || (a.type === 'event' && socket.writableLength > MAX_HELD_ANSWER_BYTES)) return false;
    socket.write(`${scrubSecrets(JSON.stringify(a))}\n`);
    return true;
  };
  const gone = new AbortController();
  socket.on('close', () => gone.abort());
  socket.on('error', () => gone.abort()); // the client went away; the request is stopped through `gone`
  try {
    const line = await readLine(socket, stopping);
    const req = parseRequest(line);
    const handler = o.handlers[req.op];
    const data = await handler(req.args, (event) => send({ type: 'event', data: event }), AbortSignal.any([stopping, gone.signal]));
    send({ type: 'result', data });
  } catch (err) {
    const e = err instanceof MlsError ? err : undefined;
    send({ type: 'error', code: e?.code ?? 'MLS_ERR_UNEXPECTED', message: describeError(err), exitCode: e?.exitCode ?? 1 });
  } finally {
    socket.end();
  }
}

class BadRequest extends MlsError {
  constructor(message: string) {
    super('MLS_ERR_USAGE', `control request refused: ${message}`, { exitCode: 2 });
  }
}

function parseRequest(line: string): { op: ControlOp; args: unknown } {
  let req: unknown;
  try {
    req = JSON.parse(line);
  } catch {
    throw new BadRequest('not JSON');
  }
  const r = req as { v?: unknown; op?: unknown; args?: unknown } | null;
  if (r === null || typeof r !== 'object') throw new BadRequest('not an object');
  if (r.v !== CONTROL_VERSION) throw new BadRequest(`version ${String(r.v)} is not ${CONTROL_VERSION}; use the mls of the running daemon`);
  if (!CONTROL_OPS.includes(r.op as ControlOp)) throw new BadRequest(`unknown operation ${JSON.stringify(r.op)}`);
  return { op: r.op as ControlOp, args: r.args };
}

/** The request line; refused when the connection ends first, or when the daemon stops while it waits. */
function readLine(socket: Socket, stopping: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      const nl = chunk.indexOf(10);
      chunks.push(nl < 0 ? chunk : chunk.subarray(0, nl));
      size += chunk.length;
      if (nl >= 0) {
        cleanup();
        resolve(Buffer.concat(chunks).toString('utf8'));
      } else if (size > MAX_REQUEST_BYTES) {
        cleanup();
        reject(new BadRequest(`longer than ${MAX_REQUEST_BYTES} bytes`));
      }
    };
    const onEnd = () => {
      cleanup();
      reject(new BadRequest('the connection ended before a whole request'));
    };
    const onStop = () => {
      cleanup();
      reject(new BadRequest('the daemon is stopping'));
    };
    const cleanup = () => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      stopping.removeEventListener('abort', onStop);
    };
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('close', onEnd);
    if (stopping.aborted) onStop();
    else stopping.addEventListener('abort', onStop);
  });
}
