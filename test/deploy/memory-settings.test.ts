// The memory settings ship in one place, the `mls` executable's `#!` line; the container
// image, the systemd unit and the StatefulSet start that executable, and an operator's
// NODE_OPTIONS changes a flag without dropping the others.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { executable, root, runThroughShebang, shebang } from './shebang-probe.js';

/** `#!/usr/bin/env -S VAR=… NODE_OPTIONS="…" node` → its variables and its NODE_OPTIONS flags. */
function parseShebang(line: string): { env: Record<string, string>; flags: string[] } {
  const m = /^#!\/usr\/bin\/env -S (.*) node$/.exec(line);
  if (!m) throw new Error(`unexpected #! line: ${line}`);
  const env = Object.fromEntries([...m[1]!.matchAll(/(\w+)=(?:"([^"]*)"|(\S+))/g)].map((x) => [x[1]!, x[2] ?? x[3]!]));
  return { env, flags: (env.NODE_OPTIONS ?? '').split(' ').filter(Boolean) };
}

describe('shipped memory settings', () => {
  const { env, flags } = parseShebang(shebang);

  it('caps the heap and the malloc arenas, and appends the operator\'s NODE_OPTIONS last', () => {
    expect(flags).toContain('--max-semi-space-size=1');
    expect(flags.some((f) => f.startsWith('--max-old-space-size='))).toBe(true);
    expect(flags.at(-1)).toBe('${NODE_OPTIONS}');
    expect(env.MALLOC_ARENA_MAX).toBe('1');
  });

  it('the built executable starts through its #! line with those settings', () => {
    expect(readFileSync(executable, 'utf8').split('\n', 1)[0]).toBe(shebang);
    const seen = runThroughShebang(undefined);
    expect(seen.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(seen.mallocArenaMax).toBe('1');
    const oldSpaceMb = Number(/--max-old-space-size=(\d+)/.exec(seen.nodeOptions)?.[1]);
    expect(oldSpaceMb).toBe(Number(flags.find((f) => f.startsWith('--max-old-space-size='))!.split('=')[1]));
    // The cap is in force: far below what node picks by itself on a machine of a few GB.
    expect(seen.heapLimitBytes).toBeLessThan((oldSpaceMb + 64) * 2 ** 20);
  });

  it('an operator\'s NODE_OPTIONS wins for the flags it names and keeps the others', () => {
    const shipped = runThroughShebang(undefined).heapLimitBytes;
    const lower = runThroughShebang('--max-old-space-size=160');
    expect(lower.heapLimitBytes).toBeLessThan(200 * 2 ** 20);
    expect(lower.nodeOptions).toContain('--max-semi-space-size=1');
    // A larger young generation raises the limit by its size, the old generation's cap kept.
    const young = runThroughShebang('--max-semi-space-size=8').heapLimitBytes;
    expect(young).toBeGreaterThan(shipped);
    expect(young).toBeLessThan(shipped + 64 * 2 ** 20);
  });

  it('the container image, the systemd unit and the StatefulSet start the executable and leave its flags to it', () => {
    const docker = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    expect(docker).toMatch(/^RUN ln -s \/app\/dist\/cli\/main\.js \/usr\/local\/bin\/mls\b/m);
    expect(docker).toMatch(/^ENTRYPOINT \["tini", "--", "mls"\]$/m);
    const unit = readFileSync(path.join(root, 'config/mls.service'), 'utf8');
    expect(unit).toMatch(/^ExecStart=\/opt\/mls\/bin\/mls run /m);
    const sts = readFileSync(path.join(root, 'deploy/kubernetes/statefulset.yaml'), 'utf8');
    expect(sts).not.toMatch(/^\s*command:/m);
    // No second copy of the flags to drift from the #! line (comments may show examples).
    for (const text of [docker, unit, sts]) {
      const live = text.split('\n').filter((l) => !/^\s*#/.test(l)).join('\n');
      expect(live).not.toMatch(/--max-semi-space-size|MALLOC_ARENA_MAX/);
    }
  });
});
