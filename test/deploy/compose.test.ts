// docker-compose.yml: every file it mounts exists, the daemon's config is valid for the
// config loader, no token is written in it, and the simulator gets flags `mls simulate` has.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/cli/config.js';
import { buildProgram } from '../../src/cli/program.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const composeText = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');

interface EnvFile {
  path: string;
  required?: boolean;
}
interface Service {
  image?: string;
  build?: string | { context: string; dockerfile?: string };
  command?: string[];
  env_file?: (string | EnvFile)[] | string;
  environment?: Record<string, string> | string[];
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  stop_grace_period?: string;
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}
const compose = parse(composeText, { merge: true }) as Compose;
const services = compose.services;

/** Bind mounts of a service: [host path resolved in the repo, container path]. */
function binds(service: Service): [string, string][] {
  return (service.volumes ?? [])
    .map((v) => v.split(':'))
    .filter(([src]) => src!.startsWith('.') || src!.startsWith('/'))
    .map(([src, dst]) => [path.resolve(root, src!), dst!]);
}

function envFiles(service: Service): EnvFile[] {
  const list = service.env_file === undefined ? [] : Array.isArray(service.env_file) ? service.env_file : [service.env_file];
  return list.map((e) => (typeof e === 'string' ? { path: e, required: true } : { required: true, ...e }));
}

/** Parses a KEY=VALUE env file as docker compose does (comments and blank lines skipped). */
function readEnvFile(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const t = line.trim();
    if (t === '' || t.startsWith('#')) continue;
    const eq = t.indexOf('=');
    out[t.slice(0, eq)] = t.slice(eq + 1);
  }
  return out;
}

describe('docker-compose.yml', () => {
  it('has the simulator, the daemon and an OpenTelemetry Collector', () => {
    expect(Object.keys(services).sort()).toEqual(['mls', 'otel-collector', 'simulator']);
    expect(services.mls!.image).toBe(services.simulator!.image);
    expect(services.mls!.build).toMatchObject({ context: '.', dockerfile: 'Dockerfile' });
    expect(existsSync(path.join(root, 'Dockerfile'))).toBe(true);
    expect(services['otel-collector']!.image).toMatch(/^otel\/opentelemetry-collector-contrib:\d+\.\d+\.\d+$/);
  });

  it('every bind-mounted file exists in the repo', () => {
    let count = 0;
    for (const [name, service] of Object.entries(services)) {
      for (const [src] of binds(service)) {
        expect(existsSync(src), `${name}: ${path.relative(root, src)}`).toBe(true);
        expect(statSync(src).isFile(), `${name}: ${path.relative(root, src)}`).toBe(true);
        count++;
      }
    }
    expect(count).toBeGreaterThanOrEqual(2);
  });

  it('required env files exist; an optional one has a .example beside it', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const e of envFiles(service)) {
        const file = path.resolve(root, e.path);
        if (e.required) expect(existsSync(file), `${name}: ${e.path}`).toBe(true);
        else expect(existsSync(`${file}.example`), `${name}: ${e.path}.example`).toBe(true);
      }
    }
  });

  it('writes no token: the token comes from the env files', () => {
    expect(composeText).not.toMatch(/MLS_API_TOKEN\s*[:=]/);
    const example = readEnvFile(path.join(root, 'config/compose/mls.env.example'));
    expect(example.MLS_API_TOKEN).toMatch(/\S/);
    expect(composeText).not.toContain(example.MLS_API_TOKEN);
    for (const [name, service] of Object.entries(services)) expect(service.environment, name).toBeUndefined();
    // The simulator and the daemon read the same files, so they agree on the token.
    expect(envFiles(services.mls!)).toEqual(envFiles(services.simulator!));
  });

  it("the daemon's config is mounted where the image looks for it and is valid", async () => {
    const mls = services.mls!;
    expect(mls.command).toEqual(['run', '--config', '/etc/mls/config.yaml']);
    const mount = binds(mls).find(([, dst]) => dst === '/etc/mls/config.yaml');
    expect(mount).toBeDefined();
    expect(mount![0]).toBe(path.join(root, 'config/compose/mls.yaml'));
    const token = readEnvFile(path.join(root, 'config/compose/mls.env.example')).MLS_API_TOKEN!;
    const config = await loadConfig(mount![0], { MLS_API_TOKEN: token });
    expect(config.api.base_url).toBe('http://simulator:8080');
    expect(config.api.token).toBe(token);
    expect(config.admin?.listen).toBe('0.0.0.0:9464');
    expect(config.sinks.find((s) => s.type === 'otlp')).toMatchObject({ endpoint: 'http://otel-collector:4318', protocol: 'http/protobuf' });
    // The state file and the file sink's output are on the named volumes.
    const volumes = (mls.volumes ?? []).filter((v) => !v.startsWith('.')).map((v) => v.split(':') as [string, string]);
    for (const [vol] of volumes) expect(compose.volumes, vol).toHaveProperty(vol);
    const volumeDirs = volumes.map(([, dst]) => dst);
    expect(volumeDirs.some((d) => config.state.path.startsWith(`${d}/`))).toBe(true);
    const file = config.sinks.find((s) => s.type === 'file');
    expect(file).toBeDefined();
    expect(volumeDirs.some((d) => (file as { path: string }).path.startsWith(`${d}/`))).toBe(true);
    // The models exist on the simulator (it names them model-1 … model-N).
    const cmd = services.simulator!.command!;
    const count = Number(cmd[cmd.indexOf('--model-count') + 1]);
    expect(config.models.map((m) => m.id)).toEqual(Array.from({ length: count }, (_, i) => `model-${i + 1}`));
  });

  it('publishes the admin port on the loopback interface only and stops gracefully', () => {
    expect(services.mls!.ports).toEqual(['127.0.0.1:9464:9464']);
    for (const [name, s] of Object.entries(services)) if (name !== 'mls') expect(s.ports, name).toBeUndefined();
    expect(Number.parseInt(services.mls!.stop_grace_period!, 10)).toBeGreaterThan(30);
    expect(services.mls!.depends_on).toMatchObject({ simulator: { condition: 'service_healthy' }, 'otel-collector': { condition: 'service_started' } });
  });

  it('the simulator listens on all interfaces of its container, with flags that `mls simulate --help` lists', () => {
    const cmd = services.simulator!.command!;
    expect(cmd[0]).toBe('simulate');
    const simulate = buildProgram().commands.find((c: Command) => c.name() === 'simulate')!;
    const help = simulate.helpInformation();
    const flags = cmd.slice(1).filter((a) => a.startsWith('--'));
    expect(flags.length).toBeGreaterThan(0);
    for (const flag of flags) expect(help, flag).toMatch(new RegExp(`(^|[\\s,])${flag}\\b`));
    const opt = (flag: string) => cmd[cmd.indexOf(flag) + 1];
    expect(opt('--host')).toBe('0.0.0.0');
    expect(opt('--port')).toBe('8080');
  });

  it('the collector receives OTLP over HTTP on 4318 and exports logs to the debug exporter', () => {
    const mount = binds(services['otel-collector']!).find(([src]) => src.endsWith('otel-collector.yaml'));
    expect(mount).toBeDefined();
    expect(services['otel-collector']!.command).toEqual([`--config=${mount![1]}`]);
    const col = parse(readFileSync(mount![0], 'utf8')) as {
      receivers: { otlp: { protocols: { http: { endpoint: string } } } };
      exporters: Record<string, unknown>;
      service: { pipelines: { logs: { receivers: string[]; exporters: string[] } } };
    };
    expect(col.receivers.otlp.protocols.http.endpoint).toBe('0.0.0.0:4318');
    expect(col.service.pipelines.logs.receivers).toContain('otlp');
    expect(col.service.pipelines.logs.exporters).toContain('debug');
    for (const e of col.service.pipelines.logs.exporters) expect(col.exporters).toHaveProperty(e);
  });
});
