// A replay of the Dockerfile's build outside Docker (no engine here): the build stage's COPY
// and RUN steps run in a temp dir with the current node, the runtime stage's COPY --from
// steps assemble the image's /app, and the pruned tree must run `mls` without dev
// dependencies.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, flags, json, root, runtime, stepsOf, type Stage } from './dockerfile-parse.js';

const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string; devDependencies: Record<string, string> };

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
  });

  it('the image holds no dev dependencies and no sources', () => {
    if (replayError) throw replayError;
    const modules = inRuntime('/app/node_modules');
    for (const dev of ['typescript', 'vitest', 'fast-check', '@types/better-sqlite3']) expect(existsSync(path.join(modules, dev)), dev).toBe(false);
    expect(Object.keys(pkg.devDependencies)).toContain('typescript');
    expect(readdirSync(inRuntime('/app')).sort()).toEqual(['config', 'dist', 'node_modules', 'package.json']);
  });

  it('`mls --version` and `mls --help` work from the pruned tree through the PATH link', () => {
    if (replayError) throw replayError;
    const version = mls(['--version']);
    expect(version.stderr).toBe('');
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toBe(`${pkg.version} (Node.js ${process.version})`);
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
