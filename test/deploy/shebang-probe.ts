//! Runs the built `mls` executable through its `#!` line, as `mls` is started on a host, in
//! the image and by the service files, and reports what node ran with: its heap limit, its
//! NODE_OPTIONS and MALLOC_ARENA_MAX. A module given with `--require` in the operator's
//! NODE_OPTIONS reads them, so the probe also shows that those options are honoured.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../', import.meta.url));
export const executable = path.join(root, 'dist/cli/main.js');
/** The `#!` line of the executable's source. */
export const shebang = readFileSync(path.join(root, 'src/cli/main.ts'), 'utf8').split('\n', 1)[0]!;

/** What node ran with. */
export interface NodeSeen {
  heapLimitBytes: number;
  nodeOptions: string;
  mallocArenaMax: string | undefined;
  /** What `mls --version` printed. */
  stdout: string;
}

/** Starts `mls --version` through its `#!` line with the operator's `nodeOptions` (none when undefined). */
export function runThroughShebang(nodeOptions: string | undefined): NodeSeen {
  const dir = mkdtempSync(path.join(tmpdir(), 'mls-shebang-'));
  try {
    const probe = path.join(dir, 'probe.cjs');
    const out = path.join(dir, 'seen.json');
    writeFileSync(
      probe,
      `require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify({ heapLimitBytes: require('node:v8').getHeapStatistics().heap_size_limit, nodeOptions: process.env.NODE_OPTIONS, mallocArenaMax: process.env.MALLOC_ARENA_MAX }));\n`,
    );
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`, MLS_COMPILE_CACHE: 'off' };
    delete env.NODE_OPTIONS;
    delete env.MALLOC_ARENA_MAX;
    env.NODE_OPTIONS = `${nodeOptions ?? ''} --require ${JSON.stringify(probe)}`.trim();
    const r = spawnSync(executable, ['--version'], { encoding: 'utf8', env });
    if (r.status !== 0) throw new Error(`mls --version exited ${String(r.status)}: ${r.stderr}`);
    return { ...(JSON.parse(readFileSync(out, 'utf8')) as Omit<NodeSeen, 'stdout'>), stdout: r.stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
