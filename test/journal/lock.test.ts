//! The single-writer lock of a state file: held by another daemon, it says so and names the
//! holder; any other failure (a full disk above all) is said as what it is, never as a lock
//! held elsewhere.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireStateLock } from '../../src/journal/lock.js';
import { StateStore } from '../../src/journal/store.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('state lock', () => {
  it('a second writer is refused while the lock is held, and admitted after release', () => {
    const path = join(dir, 'state.db');
    const lock = acquireStateLock(path);
    expect(() => acquireStateLock(path)).toThrow(/in use by another mls daemon \(pid \d+\)/);
    lock.release();
    lock.release();
    acquireStateLock(path).release();
  });

  it('a lock that cannot be taken for another reason is not said to be in use by another daemon', () => {
    const path = join(dir, 'state.db');
    mkdirSync(`${path}.lock-journal`); // SQLite cannot make its journal there
    expect(() => acquireStateLock(path)).toThrow(expect.objectContaining({ code: 'MLS_ERR_STATE_OPEN', message: expect.stringMatching(/^cannot take the lock of the state file at .*state\.db\.lock: /) }));
  });
});

// A real full disk: a small tmpfs, filled. Mounting needs root (or CAP_SYS_ADMIN); elsewhere
// the test is skipped and says so, and the case above still shows that only a lock held
// elsewhere is called one.
const full = join(mkdtempSync(join(tmpdir(), 'mls-full-')), 'fs');
let mounted = false;
try {
  mkdirSync(full);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0700', 'tmpfs', full], { stdio: 'pipe' });
  mounted = true;
  // Written until the disk says it is full, whatever room the tmpfs rounds its size to.
  const filler = openSync(join(full, 'filler'), 'w');
  try {
    for (;;) writeSync(filler, Buffer.alloc(4096));
  } catch (err) {
    if ((err as { code?: string }).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(filler);
  }
} catch (err) {
  if (!mounted) console.log(`state lock on a full disk: SKIPPED, cannot mount a tmpfs here (${String((err as { stderr?: Buffer }).stderr ?? err).trim()})`);
}
afterAll(() => {
  if (mounted) execFileSync('umount', ['-l', full], { stdio: 'pipe' });
  rmSync(join(full, '..'), { recursive: true, force: true });
});

describe.runIf(mounted)('the state file on a full disk', () => {
  it('is said to be on a full disk, with the fix: by the lock, and by the store', () => {
    const path = join(full, 'state', 'state.db');
    const fix = 'free space on that disk, or set state.path to a path on another one';
    expect(() => acquireStateLock(path)).toThrow(expect.objectContaining({ code: 'MLS_ERR_STATE_OPEN', message: expect.stringContaining(`database or disk is full; ${fix}`) }));
    expect(() => StateStore.open(path)).toThrow(expect.objectContaining({ code: 'MLS_ERR_STATE_OPEN', message: expect.stringContaining(fix) }));
  });
});
