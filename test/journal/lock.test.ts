//! The single-writer lock of a state file.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireStateLock } from '../../src/journal/lock.js';

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
});
