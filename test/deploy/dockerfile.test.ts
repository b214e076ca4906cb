// The Dockerfile's structure: stages, user, volume, health check, entrypoint, and what
// .dockerignore keeps out. Its build is replayed outside Docker in dockerfile-replay.test.ts.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { build, flags, json, parsed, root, runtime, stepsOf } from './dockerfile-parse.js';

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
    for (const p of ['node_modules', 'dist', 'release', '.git', '.env', '**/*.env']) expect(ignore).toContain(p);
    const copied = stepsOf(build, 'COPY').flatMap((c) => flags(c.args).rest.split(/\s+/).slice(0, -1)).map((s) => s.replace(/\/$/, ''));
    expect(copied.sort()).toEqual(['config', 'package-lock.json', 'package.json', 'src', 'tsconfig.json']);
    for (const c of copied) expect(ignore, c).not.toContain(c);
  });
});
