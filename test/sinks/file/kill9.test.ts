//! The file sink under real `kill -9`: a child writer committing to SQLite is killed
//! at random moments, restarted, and the output must hold every entry exactly once.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { range, readTree } from './helpers.js';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'mls-kill9-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the writer; with `killAfterMs`, SIGKILLs it that long after it is ready. */
function runWriter(total: number, killAfterMs?: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', join(fixtures, 'ts-hooks.mjs'), join(fixtures, 'writer.mjs'), dir, String(total), '16000'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (killAfterMs !== undefined && /^ready \d+\n/m.test(stdout)) {
        setTimeout(() => child.kill('SIGKILL'), killAfterMs);
        killAfterMs = undefined;
      }
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

function listFiles(d: string): string[] {
  return readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? listFiles(join(d, n)) : [join(d, n)]));
}

describe('file sink under kill -9', () => {
  it('writes every entry exactly once however often the writer is killed', async () => {
    const total = 30_000;
    let kills = 0;
    let recoveries = 0;
    for (let i = 0; i < 12; i++) {
      const run = await runWriter(total, Math.floor(Math.random() * 120));
      expect(run.stderr).toBe('');
      if (/Removed uncommitted bytes|Completed a rotation/.test(run.stdout)) recoveries++;
      if (run.signal === 'SIGKILL') kills++;
      else expect(run.stdout).toContain('done');
    }
    expect(kills).toBeGreaterThanOrEqual(6);
    const last = await runWriter(total);
    expect(last).toMatchObject({ code: 0, stderr: '' });
    if (/Removed uncommitted bytes|Completed a rotation/.test(last.stdout)) recoveries++;
    // The kills must have hit batches between their write and their commit.
    expect(recoveries).toBeGreaterThanOrEqual(1);
    expect(last.stdout).toContain('done');

    const out = join(dir, 'out');
    expect(listFiles(out).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    const seen: number[] = [];
    for (const [name, text] of Object.entries(readTree(out))) {
      expect(text.endsWith('\n'), name).toBe(true);
      let prev = 0;
      for (const line of text.slice(0, -1).split('\n')) {
        const e = JSON.parse(line) as { model_id: string; log: string };
        const seq = Number(/^line (\d+)/.exec(e.log)![1]);
        expect(seq, `${name}: order`).toBeGreaterThan(prev);
        expect(name.startsWith(e.model_id + '/')).toBe(true);
        prev = seq;
        seen.push(seq);
      }
    }
    seen.sort((a, b) => a - b);
    const dupes = seen.filter((s, i) => s === seen[i - 1]);
    expect(dupes).toEqual([]);
    expect(seen).toEqual(range(1, total));
  }, 120_000);
});
