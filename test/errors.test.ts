//! How failures are put into words: a cause already quoted is not said again, and a file
//! that cannot be written is described once, with what to change.
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { describeError, describeFileError, StateError } from '../src/errors.js';

/** An error shaped like Node's for a failed open (message, code, errno, syscall, path). */
function systemError(code: string, text: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${text}, open '${path}'`), { code, errno: -30, syscall: 'open', path });
}

const count = (text: string, part: string) => text.split(part).length - 1;

describe('describeError', () => {
  it('does not repeat a cause the message already quotes', () => {
    const cause = systemError('EIO', 'i/o error', '/var/lib/mls/state.db');
    const err = new StateError('MLS_ERR_STATE_OPEN', `cannot open the state file: ${describeError(cause)}`, { cause });
    expect(describeError(err)).toBe("cannot open the state file: EIO: i/o error, open '/var/lib/mls/state.db'");
  });

  it('still follows causes the message does not quote', () => {
    const err = new Error('the batch could not be sent', { cause: new Error('connection reset', { cause: 'socket closed' }) });
    expect(describeError(err)).toBe('the batch could not be sent: connection reset: socket closed');
  });
});

describe('describeFileError', () => {
  it('says a read-only file system once, names the path once, and gives the fix', () => {
    const path = '/srv/ro/state.db.lock';
    const cause = systemError('EROFS', 'read-only file system', path);
    const err = new StateError('MLS_ERR_STATE_OPEN', describeFileError('cannot create the lock file of the state', path, cause, 'state.path'), { cause });
    const text = describeError(err);
    expect(text).toBe(
      "cannot create the lock file of the state: EROFS: read-only file system, open '/srv/ro/state.db.lock'; set state.path to a path on a writable file system, such as a mounted volume",
    );
    expect(count(text, 'EROFS')).toBe(1);
    expect(count(text, path)).toBe(1);
  });

  it('names the path when the system error does not, and has a fix for permissions and a full disk', () => {
    expect(describeFileError('cannot open the state file', '/x/state.db', Object.assign(new Error('unable to open database file'), { code: 'SQLITE_CANTOPEN' }), 'state.path')).toBe(
      'cannot open the state file /x/state.db: unable to open database file',
    );
    expect(describeFileError('cannot open', '/x', systemError('EACCES', 'permission denied', '/x'), 'state.path')).toMatch(/write access there, or set state\.path/);
    expect(describeFileError('cannot open', '/x', systemError('ENOSPC', 'no space left on device', '/x'), 'state.path')).toMatch(/free space on that disk/);
  });

  it("gives SQLite's full database (SQLITE_FULL) the fix of a full disk", () => {
    // A database that may not grow (PRAGMA max_page_count) fails its writes as a full disk does.
    const db = new Database(':memory:');
    db.pragma('max_page_count = 2');
    const full = (() => {
      try {
        db.exec("CREATE TABLE t (v); INSERT INTO t VALUES (randomblob(100000))");
      } catch (err) {
        return err;
      } finally {
        db.close();
      }
    })();
    expect(full).toMatchObject({ code: 'SQLITE_FULL' });
    expect(describeFileError('cannot open the state file', '/x/state.db', full, 'state.path')).toBe(
      'cannot open the state file /x/state.db: database or disk is full; free space on that disk, or set state.path to a path on another one',
    );
  });
});
