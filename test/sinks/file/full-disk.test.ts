//! The file sink when the disk refuses writes: a real file-size limit (`ulimit -f`) and
//! a real full tmpfs in a private mount namespace.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { range } from './helpers.js';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const node = ['--import', join(fixtures, 'ts-hooks.mjs'), join(fixtures, 'full.mjs')];
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-full-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

interface Report {
  cursor: number;
  refused: { status: string; afterMs?: number; error: string };
  afterRefusal: { seqs?: number[]; torn?: boolean };
  committedOff: number;
  size: number;
  errors: { msg: string; code: string }[];
  secondTry: string;
  errorsLogged: number;
  afterFreeing?: string;
  final?: { seqs?: number[] };
}

function run(command: string, argv: string[]): Report {
  const r = spawnSync(command, argv, { encoding: 'utf8', timeout: 60_000 });
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as Report;
}

// A private tmpfs needs a user and mount namespace; where they are not allowed, skip.
const canMountTmpfs = spawnSync('unshare', ['-rm', 'sh', '-c', 'mount -t tmpfs -o size=64k tmpfs "$0"', tmpdir()]).status === 0;

describe('file sink on a full disk', () => {
  it('cuts a write refused past the file-size limit back to the last committed line and retries', () => {
    const report = run('sh', ['-c', 'ulimit -f 64 && exec "$0" "$@"', process.execPath, ...node, dir]);
    expect(report.refused).toMatchObject({ status: 'retry', afterMs: 10_000, error: expect.stringMatching(/^EFBIG/) as string });
    expect(report.afterRefusal).toEqual({ seqs: range(1, report.cursor) });
    expect(report.size).toBe(report.committedOff);
    expect(report.errors).toEqual([{ msg: 'Could not write to the output files; the batch will be retried.', code: 'EFBIG' }]);
    expect(report.secondTry).toBe('retry');
    expect(report.errorsLogged).toBe(1);
  });

  it.skipIf(!canMountTmpfs)('retries on ENOSPC without leaving a partial line, and writes the batch once when space is back', () => {
    const script = 'mount -t tmpfs -o size=256k tmpfs "$0" && exec "$@"';
    const report = run('unshare', ['-rm', 'sh', '-c', script, dir, process.execPath, ...node, dir, '--filler', '65536']);
    expect(report.refused).toMatchObject({ status: 'retry', error: expect.stringMatching(/^ENOSPC/) as string });
    expect(report.afterRefusal).toEqual({ seqs: range(1, report.cursor) });
    expect(report.size).toBe(report.committedOff);
    expect(report.errorsLogged).toBe(1);
    expect(report.afterFreeing).toBe('ok');
    expect(report.final).toEqual({ seqs: range(1, report.cursor + 4) });
  });
});
