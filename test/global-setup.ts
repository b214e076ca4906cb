// Builds dist/ once before the suites that start `mls` as a child process. A failed build
// stops the run: end-to-end tests must never run an older dist/.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const r = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`global setup: \`npm run build\` failed (exit ${r.status}); the tests would run an older dist/:\n${(r.stdout + r.stderr).slice(0, 4000)}`);
}
