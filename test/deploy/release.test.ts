// The release tarball (`npm run release`), built once into a temp folder and unpacked: it runs
// with its own Node.js whatever `node` is on PATH (the system's Node 20, or none), installs
// under a prefix with install.sh, and the systemd unit it ships starts it. Slow (it packs a
// Node.js runtime), so the runtime package and npm's cache are reused between runs.
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { ROOT as root, readNdjsonTree, waitFor } from '../e2e/harness.js';
import { shebang } from './shebang-probe.js';

const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
const tmp = mkdtempSync(path.join(tmpdir(), 'mls-release-'));
const tree = path.join(tmp, 'unpacked', `mls-${pkg.version}-linux-x64`);
const SYSTEM_NODE = '/usr/bin/node';

/** A folder for PATH holding only the given links (name → target). */
function pathDir(name: string, links: Record<string, string>): string {
  const dir = path.join(tmp, name);
  mkdirSync(dir, { recursive: true });
  for (const [link, target] of Object.entries(links)) symlinkSync(target, path.join(dir, link));
  return dir;
}
const olderNodeOnly = existsSync(SYSTEM_NODE) ? pathDir('older-node', { node: SYSTEM_NODE }) : undefined;
const noNode = pathDir('no-node', {});
/** A bare environment: nothing from the node, npm or vitest running this test. */
const bare = (PATH: string, extra: Record<string, string> = {}) => ({ PATH, HOME: path.join(tmp, 'home'), ...extra });
const output = (r: SpawnSyncReturns<string>) => `exit ${r.status ?? r.signal}\n${r.stdout}${r.stderr}`;

/** The VERSION file: `mls 0.1.0`, `node v24.x.y`, `glibc 2.x`. */
const versionFile = () => Object.fromEntries(readFileSync(path.join(tree, 'VERSION'), 'utf8').trim().split('\n').map((l) => l.split(' ') as [string, string]));

beforeAll(() => {
  const env: NodeJS.ProcessEnv = { ...process.env, npm_config_prefer_offline: 'true' };
  for (const key of Object.keys(env)) if (/^(npm_(?!config_prefer_offline)|VITEST|NODE_OPTIONS$)/i.test(key)) delete env[key];
  const built = spawnSync(path.join(root, 'scripts/release.sh'), [path.join(tmp, 'out')], { cwd: root, env, encoding: 'utf8', timeout: 540_000 });
  if (built.status !== 0) throw new Error(`npm run release failed:\n${output(built).slice(-4000)}`);
  const tarball = path.join(tmp, 'out', `mls-${pkg.version}-linux-x64.tar.gz`);
  expect(built.stdout).toContain(tarball);
  mkdirSync(path.join(tmp, 'unpacked'));
  const unpacked = spawnSync('tar', ['-xzf', tarball, '-C', path.join(tmp, 'unpacked')], { encoding: 'utf8' });
  if (unpacked.status !== 0) throw new Error(`tar -xzf failed:\n${output(unpacked)}`);
}, 600_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the release tarball', () => {
  it('holds the runtime, the program without its development dependencies, the configs, the unit, install.sh and VERSION', () => {
    expect(readdirSync(tree).sort()).toEqual(['VERSION', 'bin', 'config', 'install.sh', 'lib', 'node', ...(existsSync(path.join(root, 'LICENSE')) ? ['LICENSE'] : [])].sort());
    const version = versionFile();
    expect(version.mls).toBe(pkg.version);
    const runtime = spawnSync(path.join(tree, 'node/bin/node'), ['--version'], { encoding: 'utf8' });
    expect(runtime.stdout.trim()).toBe(version.node);
    expect(version.node).toMatch(/^v24\./);
    expect(existsSync(path.join(tree, 'node/LICENSE'))).toBe(true);
    for (const dev of ['typescript', 'vitest', 'fast-check', 'assemblyscript']) expect(existsSync(path.join(tree, 'lib/node_modules', dev)), dev).toBe(false);
    expect(existsSync(path.join(tree, 'lib/node_modules/better-sqlite3'))).toBe(true);
    expect(existsSync(path.join(tree, 'config/mls.service'))).toBe(true);
    expect(readdirSync(path.join(tree, 'config/examples')).length).toBeGreaterThan(3);
    // docker compose's folder may hold a local token (mls.env): it is not packed
    expect(existsSync(path.join(tree, 'config/compose'))).toBe(false);
  });

  it("names the oldest glibc it runs on: the highest GLIBC_ version its runtime and native files need, as docs/install.md does", () => {
    const natives = spawnSync('find', [path.join(tree, 'lib'), '-name', '*.node', '-type', 'f'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    expect(natives.length).toBeGreaterThan(0);
    // Only what runs with a glibc x86-64 runtime is shipped.
    for (const f of natives) expect(path.basename(path.dirname(f)) + '/' + path.basename(f), f).not.toMatch(/darwin|win32|musl|arm64/);
    const needs = spawnSync('readelf', ['-V', '-W', path.join(tree, 'node/bin/node'), ...natives], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    expect(needs.status, output(needs)).toBe(0);
    const versions = [...needs.stdout.matchAll(/Name: GLIBC_(\d+)\.(\d+)/g)].map((m) => [Number(m[1]), Number(m[2])] as const);
    const [major, minor] = versions.reduce((a, b) => (b[0] > a[0] || (b[0] === a[0] && b[1] > a[1]) ? b : a));
    expect(versionFile().glibc).toBe(`${major}.${minor}`);
    expect(readFileSync(path.join(root, 'docs/install.md'), 'utf8')).toContain(`glibc ${major}.${minor}`);
  });

  const paths = [...(olderNodeOnly ? [['only the system Node on PATH', olderNodeOnly] as const] : []), ['no node on PATH', noNode] as const];

  it.each(paths)('bin/mls --version reports mls and the bundled runtime with %s', (_, PATH) => {
    const r = spawnSync(path.join(tree, 'bin/mls'), ['--version'], { env: bare(PATH), encoding: 'utf8' });
    expect(r.status, output(r)).toBe(0);
    expect(r.stdout.trim()).toBe(`${pkg.version} (Node.js ${versionFile().node})`);
  });

  it('the system Node on PATH is not the bundled one (so the test above tells them apart)', () => {
    if (!olderNodeOnly) return console.warn(`${SYSTEM_NODE} is missing: bin/mls ran without a node on PATH only`);
    expect(spawnSync(SYSTEM_NODE, ['--version'], { encoding: 'utf8' }).stdout.trim()).not.toBe(versionFile().node);
  });

  it.each(paths)('bin/mls demo ships and checks a short demo with %s', (_, PATH) => {
    const out = path.join(tmp, `demo-${path.basename(PATH)}`);
    const r = spawnSync(path.join(tree, 'bin/mls'), ['demo', '--duration', '5s', '--out', out, '--models', '2'], { env: bare(PATH), encoding: 'utf8', timeout: 120_000 });
    expect(r.status, output(r).slice(-3000)).toBe(0);
    expect(r.stderr).toMatch(/checked against the simulator: .*raw sink 0 missing, 0 duplicated/);
    expect(readNdjsonTree(path.join(out, 'raw')).length).toBeGreaterThan(0);
  }, 150_000);

  it('a link to bin/mls (e.g. in /usr/local/bin) starts the same tree', () => {
    const links = pathDir('linked', { mls: path.join(tree, 'bin/mls'), readlink: '/usr/bin/readlink', ...(olderNodeOnly ? { node: SYSTEM_NODE } : {}) });
    const r = spawnSync(path.join(links, 'mls'), ['--version'], { env: bare(links), encoding: 'utf8' });
    expect(r.status, output(r)).toBe(0);
    expect(r.stdout.trim()).toBe(`${pkg.version} (Node.js ${versionFile().node})`);
  });
});

describe('install.sh', () => {
  const prefix = path.join(tmp, 'root/opt/mls');
  const install = (from: string, to: string) => spawnSync('sh', [path.join(from, 'install.sh'), to], { env: bare('/usr/bin:/bin'), encoding: 'utf8', timeout: 120_000 });

  it('copies the tree to PREFIX, readable by every user, runs it, and says what to do next', { timeout: 150_000 }, () => {
    chmodSync(path.join(tree, 'VERSION'), 0o600); // as a restrictive umask would leave it
    try {
      const r = install(tree, prefix);
      expect(r.status, output(r)).toBe(0);
      expect(r.stdout).toContain(`installed mls ${pkg.version} in ${prefix}\n`);
      expect(r.stdout).toContain(`${prefix}/bin/mls --version: ${pkg.version} (Node.js ${versionFile().node})`);
      for (const step of ['/etc/mls/config.yaml', '/etc/mls/api-token', `${prefix}/config/mls.service`, 'systemctl enable --now mls', 'ExecStart']) expect(r.stdout, step).toContain(step);
    } finally {
      chmodSync(path.join(tree, 'VERSION'), 0o644);
    }
    expect(statSync(path.join(prefix, 'VERSION')).mode & 0o777).toBe(0o644);
    expect(statSync(path.join(prefix, 'bin/mls')).mode & 0o777).toBe(0o755);
    expect(readdirSync(prefix).sort()).toEqual(readdirSync(tree).sort());
    const r = spawnSync(path.join(prefix, 'bin/mls'), ['--version'], { env: bare(noNode), encoding: 'utf8' });
    expect(r.stdout.trim()).toBe(`${pkg.version} (Node.js ${versionFile().node})`);
  });

  it('run again, replaces the release in place and leaves nothing beside it', { timeout: 150_000 }, () => {
    const r = install(tree, prefix);
    expect(r.status, output(r)).toBe(0);
    expect(r.stdout).toContain(`installed mls ${pkg.version} in ${prefix}, replacing mls ${pkg.version}`);
    expect(r.stdout).toContain('systemctl restart mls');
    expect(readdirSync(path.dirname(prefix))).toEqual(['mls']);
    expect(readdirSync(prefix).sort()).toEqual(readdirSync(tree).sort());
  });

  it('refuses a PREFIX that holds something other than mls, and a system with an older glibc', () => {
    const other = path.join(tmp, 'root/opt/other');
    mkdirSync(other, { recursive: true });
    writeFileSync(path.join(other, 'keep.txt'), 'x');
    const refused = install(tree, other);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`${other} is not empty and holds no mls release`);
    expect(readdirSync(other)).toEqual(['keep.txt']);

    // A tree that asks for a glibc from the future: nothing is copied.
    const future = path.join(tmp, 'future');
    mkdirSync(future);
    writeFileSync(path.join(future, 'install.sh'), readFileSync(path.join(tree, 'install.sh')));
    writeFileSync(path.join(future, 'VERSION'), `mls ${pkg.version}\nnode v24.0.0\nglibc 2.999\n`);
    const old = install(future, path.join(tmp, 'root/opt/future'));
    expect(old.status).toBe(1);
    expect(old.stderr).toMatch(/needs glibc 2\.999 or newer; this system has glibc 2\.\d+/);
    expect(existsSync(path.join(tmp, 'root/opt/future'))).toBe(false);
  });
});

describe('the systemd unit, on the installed tree', () => {
  const prefix = path.join(tmp, 'root/opt/mls');
  /** The shipped unit with /opt/mls moved to the test's prefix. */
  const unitText = () => readFileSync(path.join(prefix, 'config/mls.service'), 'utf8').replaceAll('/opt/mls/', `${prefix}/`);
  const directives = (key: string) => [...unitText().matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1]!.replace(/^"(.*)"$/, '$1'));
  let sim: Simulator | undefined;
  afterAll(async () => sim?.close());

  it('passes `systemd-analyze verify` with its ExecStart pointing into the tree', () => {
    const [execStart] = directives('ExecStart');
    expect(execStart).toBe(`${prefix}/bin/mls run --config /etc/mls/config.yaml`);
    const analyze = spawnSync('systemd-analyze', ['--version']).status === 0;
    if (!analyze) return console.warn('systemd-analyze is missing here: only the unit\'s ExecStart was checked');
    const file = path.join(tmp, 'mls.service');
    writeFileSync(file, unitText());
    const r = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8', cwd: tmp });
    expect(r.stderr + r.stdout).toBe('');
    expect(r.status).toBe(0);
  });

  it("its ExecStart, with the unit's environment and the token as a credential, runs the daemon on the bundled runtime with the #! line's settings", async () => {
    const token = 'release-test-token';
    sim = await startSimulator({ token, models: ['m1', 'm2'], ratePerSec: 20, historyMs: 30_000, seed: 47 });
    const work = path.join(tmp, 'service');
    mkdirSync(path.join(work, 'credentials'), { recursive: true });
    writeFileSync(path.join(work, 'credentials/mls-api-token'), `${token}\n`);
    const config = path.join(work, 'config.yaml');
    writeFileSync(
      config,
      [`api: { base_url: "${sim.url}" }`, `state: { path: ${work}/state/state.db }`, 'poll: { interval: 1s, start_at: -1m }', 'models: [{ id: m1 }, { id: m2 }]', `sinks: [{ name: archive, type: file, path: "${work}/out/{model_id}.ndjson" }]`, ''].join('\n'),
    );
    const env: Record<string, string> = bare(noNode, { CREDENTIALS_DIRECTORY: path.join(work, 'credentials') });
    for (const e of directives('Environment')) env[e.slice(0, e.indexOf('='))] = e.slice(e.indexOf('=') + 1).replace('%C', path.join(work, 'cache'));
    mkdirSync(path.join(work, 'cache'), { mode: 0o700 });
    const [command, ...args] = directives('ExecStart')[0]!.replace('/etc/mls/config.yaml', config).split(' ');
    const daemon = spawn(command!, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    daemon.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => daemon.once('exit', (code) => resolve(code)));
    try {
      await waitFor(() => existsSync(path.join(work, 'out')) && readNdjsonTree(path.join(work, 'out')).length > 0, 60_000, 'entries in the file sink', 200, () => stderr.slice(-2000));
      // The launcher put the bundled runtime first on PATH and ran the program, whose #! line
      // started that runtime with its variables and flags.
      const home = realpathSync(prefix);
      expect(readlinkSync(`/proc/${daemon.pid}/exe`)).toBe(`${home}/node/bin/node`);
      const cmdline = readFileSync(`/proc/${daemon.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      expect(cmdline.slice(1)).toEqual([`${home}/lib/dist/cli/main.js`, 'run', '--config', config]);
      const environ = readFileSync(`/proc/${daemon.pid}/environ`, 'utf8').split('\0');
      const shipped = /^#!\/usr\/bin\/env -S MALLOC_ARENA_MAX=(\S+) NODE_OPTIONS="([^$"]*?) ?\$\{NODE_OPTIONS\}" node$/.exec(shebang)!;
      expect(environ).toContain(`MALLOC_ARENA_MAX=${shipped[1]}`);
      expect(environ.find((e) => e.startsWith('NODE_OPTIONS='))?.trim()).toBe(`NODE_OPTIONS=${shipped[2]}`);
    } finally {
      daemon.kill('SIGTERM');
    }
    expect(await exited, stderr.slice(-2000)).toBe(0);
  }, 120_000);
});
