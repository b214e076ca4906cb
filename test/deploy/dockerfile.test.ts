// The Dockerfile: its structure (stages, user, volume, health check, entrypoint), and a
// replay of its build outside Docker (no engine here): the build stage's COPY and RUN
// steps run in a temp dir with the current node, the runtime stage's COPY --from steps
// assemble the image's /app, and the pruned tree must run `mls` without dev dependencies.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dockerfileText = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string; devDependencies: Record<string, string> };

interface Instruction {
  op: string;
  /** Everything after the keyword, continuation lines joined. */
  args: string;
  line: number;
}
interface Stage {
  image: string;
  name: string | undefined;
  steps: Instruction[];
}

/** Splits a Dockerfile into instructions: comments dropped, `\` continuations joined. */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const start = i + 1;
    while (line.endsWith('\\')) {
      line = line.slice(0, -1).trimEnd();
      let next = lines[++i];
      while (next !== undefined && next.trim().startsWith('#')) next = lines[++i];
      if (next === undefined) break;
      line += ` ${next.trim()}`;
    }
    const m = /^(\S+)\s*(.*)$/.exec(line)!;
    out.push({ op: m[1]!.toUpperCase(), args: m[2]!, line: start });
  }
  return out;
}

/** Groups instructions into stages, substituting the global ARGs in FROM. */
function stages(all: Instruction[]): { args: Record<string, string>; stages: Stage[] } {
  const args: Record<string, string> = {};
  const out: Stage[] = [];
  for (const ins of all) {
    if (ins.op === 'ARG' && out.length === 0) {
      const [k, v] = ins.args.split('=');
      args[k!] = v ?? '';
    } else if (ins.op === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args)!;
      const image = m[1]!.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a: string | undefined, b: string | undefined) => args[(a ?? b)!] ?? '');
      out.push({ image, name: m[2], steps: [] });
    } else if (out.length > 0) {
      out.at(-1)!.steps.push(ins);
    }
  }
  return { args, stages: out };
}

const parsed = stages(instructions(dockerfileText));
const build = parsed.stages.find((s) => s.name === 'build')!;
const runtime = parsed.stages.at(-1)!;
const stepsOf = (stage: Stage, op: string) => stage.steps.filter((s) => s.op === op);
const json = (args: string): unknown => JSON.parse(args);

/** `--flag=value` options in front of a COPY or RUN, and the rest. */
function flags(args: string): { flags: Record<string, string>; rest: string } {
  const out: Record<string, string> = {};
  let rest = args;
  for (;;) {
    const m = /^--([a-z-]+)(?:=(\S+))?\s+/.exec(rest);
    if (!m) break;
    out[m[1]!] = m[2] ?? '';
    rest = rest.slice(m[0].length);
  }
  return { flags: out, rest };
}

describe('Dockerfile structure', () => {
  it('has a build stage and a runtime stage on a pinned Node 24 slim image', () => {
    expect(parsed.stages.map((s) => s.name)).toEqual(['build', 'runtime']);
    for (const s of parsed.stages) expect(s.image).toMatch(/^node:24(\.\d+)*-(bookworm|trixie)-slim$/);
  });

  it('the build stage installs, builds and prunes the dev dependencies', () => {
    const runs = stepsOf(build, 'RUN').map((r) => flags(r.args).rest);
    expect(runs.some((r) => /^npm ci\b/.test(r))).toBe(true);
    expect(runs).toContain('npm run build');
    expect(runs.some((r) => /^npm prune --omit=dev\b/.test(r))).toBe(true);
    // No compiler in the runtime image; better-sqlite3 brings its binary.
    expect(stepsOf(runtime, 'RUN').map((r) => r.args).join('\n')).not.toMatch(/\b(g\+\+|make|python3|build-essential)\b/);
  });

  it('the runtime stage copies only production files from the build stage', () => {
    const copies = stepsOf(runtime, 'COPY').map((c) => flags(c.args));
    expect(copies.length).toBeGreaterThan(0);
    for (const c of copies) expect(c.flags.from).toBe('build');
    const sources = copies.map((c) => c.rest.split(/\s+/)[0]!.replace(/\/$/, ''));
    expect(sources.sort()).toEqual(['/app/config', '/app/dist', '/app/node_modules', '/app/package.json']);
  });

  it('runs as a non-root user with the state directory on a volume', () => {
    const user = stepsOf(runtime, 'USER').at(-1)?.args;
    expect(user).toBeDefined();
    const [uid, gid] = user!.split(':');
    expect(uid).not.toMatch(/^(0|root)$/);
    expect(gid ?? '').not.toMatch(/^(0|root)$/);
    expect(Number(uid)).toBeGreaterThanOrEqual(1000);
    const setup = stepsOf(runtime, 'RUN').map((r) => r.args).join('\n');
    expect(setup).toContain(`--uid ${uid}`);
    expect(setup).toMatch(new RegExp(`chown ${uid}:${gid ?? uid} /var/lib/mls`));
    const volumes = stepsOf(runtime, 'VOLUME').flatMap((v) => (v.args.startsWith('[') ? (json(v.args) as string[]) : v.args.split(/\s+/)));
    expect(volumes).toEqual(['/var/lib/mls']);
    expect(stepsOf(runtime, 'EXPOSE').map((e) => e.args)).toEqual(['9464']);
  });

  it('checks /healthz with node itself, and runs mls under tini', () => {
    const hc = stepsOf(runtime, 'HEALTHCHECK');
    expect(hc).toHaveLength(1);
    const cmd = /\bCMD\s+(\[.*\])$/.exec(hc[0]!.args);
    expect(cmd).not.toBeNull();
    const argv = json(cmd![1]!) as string[];
    expect(argv.slice(0, 2)).toEqual(['node', '-e']);
    expect(argv[2]).toContain("fetch('http://127.0.0.1:9464/healthz')");
    expect(stepsOf(runtime, 'RUN').map((r) => r.args).join('\n')).toMatch(/apt-get install -y --no-install-recommends tini\b/);
    expect(json(stepsOf(runtime, 'ENTRYPOINT').at(-1)!.args)).toEqual(['tini', '--', 'mls']);
    expect(json(stepsOf(runtime, 'CMD').at(-1)!.args)).toEqual(['run', '--config', '/etc/mls/config.yaml']);
    expect(stepsOf(runtime, 'RUN').map((r) => r.args).join('\n')).toContain('ln -s /app/dist/cli/main.js /usr/local/bin/mls');
  });

  it('.dockerignore keeps secrets and local builds out, but not what the build copies', () => {
    const ignore = readFileSync(path.join(root, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
    for (const p of ['node_modules', 'dist', '.git', '.env', '**/*.env']) expect(ignore).toContain(p);
    const copied = stepsOf(build, 'COPY').flatMap((c) => flags(c.args).rest.split(/\s+/).slice(0, -1)).map((s) => s.replace(/\/$/, ''));
    expect(copied.sort()).toEqual(['config', 'package-lock.json', 'package.json', 'src', 'tsconfig.json']);
    for (const c of copied) expect(ignore, c).not.toContain(c);
  });
});

// ---------------------------------------------------------------------------------------
// Replay

const nodeBin = path.dirname(process.execPath);
const tmp = mkdtempSync(path.join(tmpdir(), 'mls-docker-'));
const buildRoot = path.join(tmp, 'build');
const runtimeRoot = path.join(tmp, 'runtime');
/** The stages' absolute paths, mapped into the temp dir. */
const inBuild = (p: string) => path.join(buildRoot, p);
const inRuntime = (p: string) => path.join(runtimeRoot, p);
const children: ChildProcess[] = [];
let replayLog = '';

function sh(command: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): void {
  const r = spawnSync('sh', ['-ec', command], { cwd, env, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
  replayLog += `\n$ ${command}\n${r.stdout}${r.stderr}`;
  if (r.status !== 0) throw new Error(`\`${command}\` failed (${r.status ?? r.signal ?? r.error?.message}):\n${(r.stdout + r.stderr).slice(-4000)}`);
}

/** Replays one stage. `map` turns a path of the stage's file system into a temp path. */
function replay(stage: Stage, map: (p: string) => string, fromStage: (p: string) => string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${map('/usr/local/bin')}:${nodeBin}:${process.env.PATH ?? ''}` };
  // A clean environment, as in a Docker build: nothing from the npm or vitest running this test.
  for (const key of Object.keys(env)) if (/^(npm_|VITEST|NODE_OPTIONS$|NODE_ENV$)/i.test(key)) delete env[key];
  let workdir = map('/');
  mkdirSync(map('/usr/local/bin'), { recursive: true });
  const resolve = (p: string) => (path.isAbsolute(p) ? map(p) : path.join(workdir, p));
  for (const step of stage.steps) {
    switch (step.op) {
      case 'WORKDIR':
        workdir = resolve(step.args);
        mkdirSync(workdir, { recursive: true });
        break;
      case 'ENV':
        // KEY=value or KEY="value with spaces", as Docker reads them
        for (const m of step.args.matchAll(/(\w+)=(?:"([^"]*)"|(\S+))/g)) env[m[1]!] = m[2] ?? m[3]!;
        break;
      case 'COPY': {
        const { flags: f, rest } = flags(step.args);
        const parts = rest.split(/\s+/);
        const dest = parts.pop()!;
        for (const src of parts) {
          const from = f.from !== undefined ? fromStage(src) : path.join(root, src);
          const to = dest.endsWith('/') && !src.endsWith('/') ? path.join(resolve(dest), path.basename(src)) : resolve(dest);
          cpSync(from, to, { recursive: true, verbatimSymlinks: true, filter: (s) => !/(^|\/)(\.env|[^/]*\.env|[^/]*\.db(-wal|-shm)?)$/.test(s) });
        }
        break;
      }
      case 'RUN': {
        const command = flags(step.args).rest;
        // System set-up (packages, users) is what the base image and Docker provide.
        if (/\b(apt-get|useradd|groupadd)\b/.test(command)) break;
        const mapped = command.replace(/(^|[\s=])(\/(?:app|usr\/local\/bin)\b[^\s;&|]*)/g, (_, pre: string, p: string) => `${pre}${map(p)}`);
        sh(mapped, workdir, env, 200_000);
        break;
      }
      default:
        break;
    }
  }
  return env;
}

let runtimeEnv: NodeJS.ProcessEnv;
let replayError: unknown;

function mls(args: string[], extraEnv: NodeJS.ProcessEnv = {}) {
  return spawnSync('mls', args, { cwd: inRuntime('/app'), env: { ...runtimeEnv, ...extraEnv }, encoding: 'utf8', timeout: 30_000 });
}

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function until<T>(what: string, timeoutMs: number, probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('Dockerfile replay (outside Docker)', () => {
  beforeAll(() => {
    try {
      replay(build, inBuild, () => {
        throw new Error('the build stage copies from no other stage');
      });
      runtimeEnv = replay(runtime, inRuntime, inBuild);
    } catch (err) {
      replayError = err;
    }
  }, 420_000);

  afterAll(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    rmSync(tmp, { recursive: true, force: true });
  });

  it('the build stage succeeds: npm ci, npm run build, npm prune --omit=dev', () => {
    if (replayError) throw replayError;
    expect(existsSync(inBuild('/app/dist/cli/main.js'))).toBe(true);
    expect(existsSync(inRuntime('/usr/local/bin/mls'))).toBe(true);
    // The page kernel is committed compiled and copied by the build: no compiler in the image.
    expect(readFileSync(inRuntime('/app/dist/api/page/kernel/page.wasm')).equals(readFileSync(path.join(root, 'src/api/page/kernel/page.wasm')))).toBe(true);
  });

  it('the image holds no dev dependencies and no sources', () => {
    if (replayError) throw replayError;
    const modules = inRuntime('/app/node_modules');
    for (const dev of ['typescript', 'vitest', 'fast-check', '@types/better-sqlite3', 'assemblyscript']) expect(existsSync(path.join(modules, dev)), dev).toBe(false);
    expect(Object.keys(pkg.devDependencies)).toContain('typescript');
    expect(readdirSync(inRuntime('/app')).sort()).toEqual(['config', 'dist', 'node_modules', 'package.json']);
  });

  it('`mls --version` and `mls --help` work from the pruned tree through the PATH link', () => {
    if (replayError) throw replayError;
    const version = mls(['--version']);
    expect(version.stderr).toBe('');
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toBe(pkg.version);
    const help = mls(['--help']);
    expect(help.status).toBe(0);
    for (const cmd of ['run', 'simulate', 'validate', 'status', 'demo', 'dlq']) expect(help.stdout).toMatch(new RegExp(`^\\s+${cmd}\\b`, 'm'));
    const simulate = mls(['simulate', '--help']);
    expect(simulate.status).toBe(0);
    expect(simulate.stdout).toContain('--host');
  });

  it('the compose config validates in the image', () => {
    if (replayError) throw replayError;
    const r = mls(['validate', '--config', 'config/compose/mls.yaml'], { MLS_API_TOKEN: 'replay-token' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('runs the daemon against the simulator, ships to a file and OTLP, answers the HEALTHCHECK, stops on SIGTERM', async () => {
    if (replayError) throw replayError;
    const work = path.join(tmp, 'run');
    mkdirSync(work, { recursive: true });
    const env = { ...runtimeEnv, MLS_API_TOKEN: 'replay-token' };

    // A minimal OTLP/HTTP receiver.
    let otlpPosts = 0;
    const receiver: Server = createHttpServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.method === 'POST' && req.url === '/v1/logs') otlpPosts++;
        res.writeHead(200, { 'content-type': 'application/x-protobuf' });
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const otlpPort = (receiver.address() as AddressInfo).port;

    try {
      const sim = spawn('mls', ['simulate', '--host', '127.0.0.1', '--port', '0', '--model-count', '2', '--history', '1m', '--rate', '20'], { cwd: work, env, stdio: ['ignore', 'ignore', 'pipe'] });
      children.push(sim);
      let simErr = '';
      sim.stderr!.on('data', (d: Buffer) => (simErr += d.toString()));
      const url = await until('the simulator', 20_000, () => /listening on (http:\/\/\S+)/.exec(simErr)?.[1]);

      const adminPort = await freePort();
      writeFileSync(
        path.join(work, 'config.yaml'),
        [
          'api:',
          `  base_url: ${url}`,
          'state:',
          '  path: ./state/state.db',
          'poll:',
          '  interval: 1s',
          '  start_at: -1m',
          '  lookback: 10s',
          'models:',
          '  - id: model-1',
          '  - id: model-2',
          'sinks:',
          '  - name: archive',
          '    type: file',
          '    path: ./out/{model_id}.ndjson',
          '  - name: collector',
          '    type: otlp',
          `    endpoint: http://127.0.0.1:${otlpPort}`,
          '    protocol: http/protobuf',
          'admin:',
          `  listen: 127.0.0.1:${adminPort}`,
          '',
        ].join('\n'),
      );
      const daemon = spawn('mls', ['run', '--config', 'config.yaml'], { cwd: work, env, stdio: ['ignore', 'ignore', 'pipe'] });
      children.push(daemon);
      let daemonErr = '';
      daemon.stderr!.on('data', (d: Buffer) => (daemonErr += d.toString()));
      const exited = new Promise<number | null>((resolve) => daemon.on('exit', (code) => resolve(code)));

      // The image's HEALTHCHECK command, on the port of this run.
      const hc = /\bCMD\s+(\[.*\])$/.exec(stepsOf(runtime, 'HEALTHCHECK')[0]!.args)!;
      const argv = (json(hc[1]!) as string[]).map((a) => a.replace(':9464/', `:${adminPort}/`));
      await until(`the HEALTHCHECK to pass (daemon stderr: ${daemonErr.slice(-2000)})`, 30_000, () => spawnSync(argv[0]!, argv.slice(1), { env, timeout: 10_000 }).status === 0 || undefined);

      await until('entries in the file sink', 30_000, () => {
        const dir = path.join(work, 'out');
        if (!existsSync(dir)) return undefined;
        const lines = readdirSync(dir).reduce((n, f) => n + readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean).length, 0);
        return lines > 0 || undefined;
      });
      await until('an OTLP export', 30_000, () => otlpPosts > 0 || undefined);

      daemon.kill('SIGTERM');
      const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 35_000))]);
      expect(code, daemonErr.slice(-2000)).toBe(0);
      expect(daemonErr).toContain('stop signal received');
      sim.kill('SIGTERM');
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  }, 150_000);
});

if (process.env.MLS_DOCKER_REPLAY_LOG) afterAll(() => writeFileSync(process.env.MLS_DOCKER_REPLAY_LOG!, replayLog));
