// Builds dist/ once before the suites that start `mls` as a child process. Type errors are
// reported by `npm run typecheck`; tsc still emits, so a run here never blocks the tests.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const r = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) process.stderr.write(`global setup: build reported problems (dist/ may be incomplete):\n${(r.stdout + r.stderr).slice(0, 4000)}\n`);
}
