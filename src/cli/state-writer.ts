//! How a command that writes to the state file reaches its single writer: with no daemon
//! running, it takes the state file's lock and writes itself (holding the lock, so no
//! daemon starts meanwhile); while a daemon runs, it asks the daemon over the control
//! socket beside the state file (control/). Never through the network admin port.
import { acquireStateLock } from '../journal/lock.js';
import { connectControl, type ControlConnection } from '../control/client.js';
import { controlSocketPath } from '../control/protocol.js';
import { StateError, describeError } from '../errors.js';

/** How long to wait for the socket of a daemon that holds the lock (it may be starting). */
const CONNECT_WAIT_MS = 10_000;

/** The two ways of writing: directly, or through the running daemon. */
export interface StateWrite<T> {
  /** No daemon runs: the lock is held while this runs. */
  direct(): Promise<T>;
  /** A daemon runs: ask it. */
  viaDaemon(daemon: ControlConnection): Promise<T>;
}

/** Runs `how.direct` under the state file's lock, or `how.viaDaemon` when a daemon holds it. */
export async function writeState<T>(statePath: string, how: StateWrite<T>): Promise<T> {
  let lock;
  try {
    lock = acquireStateLock(statePath);
  } catch (err) {
    if (!(err instanceof StateError) || err.code !== 'MLS_ERR_STATE_LOCKED') throw err;
    const path = controlSocketPath(statePath);
    const conn = await connectControl(path, CONNECT_WAIT_MS).catch((cause: unknown) => {
      throw new StateError(
        'MLS_ERR_STATE_CONTROL',
        `${err.message.split(';')[0]}, and its control socket ${path} does not answer (${describeError(cause)}); ` +
          'see its log (a daemon of an older mls has no control socket), or stop it and try again',
        { cause },
      );
    });
    try {
      return await how.viaDaemon(conn);
    } finally {
      conn.close();
    }
  }
  try {
    return await how.direct();
  } finally {
    lock.release();
  }
}
