//! The commands' side of the control channel (protocol.ts): connects to the running
//! daemon's socket, sends one request and reads its events and result.
import { createConnection, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { MlsError, StateError, describeError, type ExitCode } from '../errors.js';
import { CONTROL_VERSION, type ControlAnswer, type ControlOp } from './protocol.js';

/** A connection to a running daemon's control socket, for one request. */
export interface ControlConnection {
  /**
   * Sends `op` with `args`; `onEvent` sees each event; resolves with the result.
   * @throws MlsError with the daemon's code and exit code when the daemon answers an error.
   */
  request(op: ControlOp, args: unknown, onEvent?: (data: unknown) => void): Promise<unknown>;
  /** Stops reading the daemon's answers until {@link ControlConnection.resume} (the daemon then holds, or drops, what follows). */
  pause(): void;
  resume(): void;
  close(): void;
}

function connectOnce(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/**
 * Connects to the socket at `path`, trying again for up to `waitMs` while it is missing or
 * refuses (a daemon that holds the lock but is still starting).
 * @throws the last connection error once `waitMs` passed.
 */
export async function connectControl(path: string, waitMs: number): Promise<ControlConnection> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return wrap(await connectOnce(path));
    } catch (err) {
      const code = (err as { code?: string }).code;
      if ((code !== 'ENOENT' && code !== 'ECONNREFUSED') || Date.now() >= deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

function wrap(socket: Socket): ControlConnection {
  return {
    request(op, args, onEvent) {
      return new Promise((resolve, reject) => {
        let settled = false;
        const settle = (fn: () => void) => {
          if (settled) return;
          settled = true;
          fn();
          socket.end();
        };
        createInterface({ input: socket, crlfDelay: Infinity }).on('line', (line) => {
          if (settled) return;
          let a: ControlAnswer;
          try {
            a = JSON.parse(line) as ControlAnswer;
          } catch {
            return settle(() => reject(new StateError('MLS_ERR_STATE_CONTROL', 'the running daemon answered something that is not JSON on its control socket')));
          }
          if (a.type === 'event') onEvent?.(a.data);
          else if (a.type === 'result') settle(() => resolve(a.data));
          else settle(() => reject(new MlsError(a.code, a.message, { exitCode: a.exitCode as ExitCode })));
        });
        const lost = (err?: unknown) =>
          settle(() =>
            reject(new StateError('MLS_ERR_STATE_CONTROL', `the running daemon closed its control socket before answering${err ? ` (${describeError(err)})` : ''}; see its log, then try again`)),
          );
        socket.on('error', lost);
        socket.on('close', () => lost());
        socket.write(`${JSON.stringify({ v: CONTROL_VERSION, op, args })}\n`);
      });
    },
    pause: () => socket.pause(),
    resume: () => socket.resume(),
    close() {
      socket.destroy();
    },
  };
}
