// The memory settings the executable ships with (its `#!` line) are the ones the container
// image and the systemd unit set for node, and the executable runs as written.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const shebang = readFileSync(path.join(root, 'src/cli/main.ts'), 'utf8').split('\n', 1)[0]!;

/** `#!/usr/bin/env -S VAR=… node --flag…` → its variables and node flags. */
function parseShebang(line: string): { env: Record<string, string>; flags: string[] } {
  const m = /^#!\/usr\/bin\/env -S (.*)$/.exec(line);
  if (!m) throw new Error(`unexpected #! line: ${line}`);
  const words = m[1]!.split(' ').filter(Boolean);
  const at = words.indexOf('node');
  expect(at).toBeGreaterThanOrEqual(0);
  return { env: Object.fromEntries(words.slice(0, at).map((w) => w.split('=') as [string, string])), flags: words.slice(at + 1) };
}

describe('shipped memory settings', () => {
  const { env, flags } = parseShebang(shebang);

  it('caps the heap and the malloc arenas', () => {
    expect(flags).toContain('--max-semi-space-size=1');
    expect(flags.some((f) => f.startsWith('--max-old-space-size='))).toBe(true);
    expect(env.MALLOC_ARENA_MAX).toBe('1');
  });

  it('the Dockerfile and the systemd unit set the same flags and variables', () => {
    const docker = readFileSync(path.join(root, 'Dockerfile'), 'utf8').replace(/\\\n\s*/g, ' ');
    const unit = readFileSync(path.join(root, 'config/mls.service'), 'utf8');
    for (const text of [docker, unit]) {
      const options = /NODE_OPTIONS=("?)([^"\n]*)\1/.exec(text)?.[2];
      expect(options?.split(' ').filter(Boolean)).toEqual(flags);
      for (const [k, v] of Object.entries(env)) expect(text).toMatch(new RegExp(`\\b${k}=${v}\\b`));
    }
  });

  it('the built executable starts through its #! line', () => {
    const exe = path.join(root, 'dist/cli/main.js');
    expect(readFileSync(exe, 'utf8').split('\n', 1)[0]).toBe(shebang);
    // The node the tests run on comes first on PATH, as `env` finds `node` there.
    const r = spawnSync(exe, ['--version'], { encoding: 'utf8', env: { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}` } });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
