//! Single-writer lock of a state file: a second daemon on the same state refuses to
//! start. The lock is an exclusive SQLite transaction held on `<state>.lock`; the
//! operating system releases it when the process dies, even by SIGKILL.
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { StateError, describeFileError } from '../errors.js';

/** A held lock. `release()` is idempotent. */
export interface StateLock {
  release(): void;
}

/** Takes the single-writer lock of `statePath` or throws a StateError naming the holder. */
export function acquireStateLock(statePath: string): StateLock {
  const lockPath = `${statePath}.lock`;
  const pidPath = `${statePath}.pid`;
  let db: Database.Database;
  try {
    mkdirSync(dirname(statePath), { recursive: true, mode: 0o700 });
    closeSync(openSync(lockPath, 'a', 0o600));
    db = new Database(lockPath, { timeout: 0 });
  } catch (err) {
    throw new StateError('MLS_ERR_STATE_OPEN', describeFileError('cannot create the lock file of the state', lockPath, err, 'state.path'), { cause: err });
  }
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    // Only a lock held elsewhere is "in use"; a full disk or an I/O error is said as what it is.
    const code = (err as { code?: unknown }).code;
    if (code !== 'SQLITE_BUSY' && code !== 'SQLITE_LOCKED') {
      throw new StateError('MLS_ERR_STATE_OPEN', describeFileError('cannot take the lock of the state file at', lockPath, err, 'state.path'), { cause: err });
    }
    let holder = '';
    try {
      holder = readFileSync(pidPath, 'utf8').trim();
    } catch {
      // no pid file: the holder did not get that far
    }
    throw new StateError(
      'MLS_ERR_STATE_LOCKED',
      `state file ${statePath} is in use by another mls daemon${holder ? ` (pid ${holder})` : ''}; stop it first, or give this one its own state.path`,
      { cause: err },
    );
  }
  let released = false;
  const lock = {
    release() {
      if (released) return;
      released = true;
      try {
        db.exec('ROLLBACK');
      } finally {
        db.close();
      }
    },
  };
  try {
    writeFileSync(pidPath, `${process.pid}\n`, { mode: 0o600 });
  } catch (err) {
    lock.release();
    throw new StateError('MLS_ERR_STATE_OPEN', describeFileError('cannot write', pidPath, err, 'state.path'), { cause: err });
  }
  return lock;
}
