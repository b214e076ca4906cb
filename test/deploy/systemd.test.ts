// The systemd unit: its hardening directives, and `systemd-analyze verify` when the
// command is on this machine (it checks every directive against the installed systemd).
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { TOKEN_CREDENTIAL } from '../../src/config/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const unitText = readFileSync(path.join(root, 'config/mls.service'), 'utf8');

/** Directives of one section, in order, continuation lines joined; comments dropped. */
function section(text: string, name: string): [string, string][] {
  const out: [string, string][] = [];
  let current = '';
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  for (const raw of lines) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const head = /^\[(.+)\]$/.exec(line);
    if (head) {
      current = head[1]!;
      continue;
    }
    if (current !== name) continue;
    const eq = line.indexOf('=');
    out.push([line.slice(0, eq).trim(), line.slice(eq + 1).trim()]);
  }
  return out;
}

const service = section(unitText, 'Service');
const values = (key: string): string[] => service.filter(([k]) => k === key).map(([, v]) => v);
const value = (key: string): string | undefined => values(key).at(-1);

function findSystemdAnalyze(): string | undefined {
  for (const candidate of ['/usr/bin/systemd-analyze', '/bin/systemd-analyze']) {
    if (spawnSync(candidate, ['--version']).status === 0) return candidate;
  }
  const r = spawnSync('systemd-analyze', ['--version']);
  return r.status === 0 ? 'systemd-analyze' : undefined;
}

const tmp = mkdtempSync(path.join(tmpdir(), 'mls-unit-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/**
 * Copies the unit into a temp dir with /opt/mls/bin/mls replaced by a stub executable there
 * (verify checks that ExecStart exists, and mls is not installed on a build machine; the
 * release test verifies it against a real installed tree); every other line is verified as written.
 */
function verifiable(text: string, name: string): string {
  const stub = path.join(tmp, 'bin', 'mls');
  mkdirSync(path.dirname(stub), { recursive: true });
  writeFileSync(stub, '#!/bin/sh\nexit 0\n');
  chmodSync(stub, 0o755);
  const file = path.join(tmp, name);
  writeFileSync(file, text.replaceAll('/opt/mls/bin/mls', stub));
  return file;
}

describe('config/mls.service', () => {
  it('runs `mls run` with the documented config path, reloads with SIGHUP, restarts on failure', () => {
    expect(value('Type')).toBe('simple');
    expect(value('ExecStart')).toBe('/opt/mls/bin/mls run --config /etc/mls/config.yaml');
    expect(value('ExecReload')).toBe('/bin/kill -HUP $MAINPID');
    expect(value('Restart')).toBe('on-failure');
    expect(section(unitText, 'Install')).toContainEqual(['WantedBy', 'multi-user.target']);
  });

  it('stops later than the default shutdown_timeout (30s)', () => {
    const stop = value('TimeoutStopSec');
    expect(stop).toMatch(/^\d+s?$/);
    expect(Number.parseInt(stop!, 10)).toBeGreaterThan(30);
  });

  it('passes the token as the credential the config loader reads', () => {
    // The loader falls back to $CREDENTIALS_DIRECTORY/<TOKEN_CREDENTIAL>.
    expect(values('LoadCredential')).toContain(`${TOKEN_CREDENTIAL}:/etc/mls/api-token`);
    expect(unitText).not.toMatch(/MLS_API_TOKEN=/);
  });

  it('has the hardening directives', () => {
    const expected: Record<string, string> = {
      DynamicUser: 'yes',
      StateDirectory: 'mls',
      ConfigurationDirectory: 'mls',
      ProtectSystem: 'strict',
      ProtectHome: 'yes',
      NoNewPrivileges: 'yes',
      PrivateTmp: 'yes',
      PrivateDevices: 'yes',
      ProtectKernelTunables: 'yes',
      ProtectKernelModules: 'yes',
      ProtectControlGroups: 'yes',
      RestrictAddressFamilies: 'AF_INET AF_INET6 AF_UNIX',
      LockPersonality: 'yes',
      SystemCallArchitectures: 'native',
      UMask: '0077',
    };
    for (const [key, v] of Object.entries(expected)) expect(value(key), key).toBe(v);
  });

  it('keeps the compile cache in its own cache directory (the dynamic user has no home)', () => {
    expect(value('CacheDirectory')).toBe('mls');
    expect(value('CacheDirectoryMode')).toBe('0700');
    expect(values('Environment')).toContain('MLS_COMPILE_CACHE=%C/mls');
  });

  it('does not set MemoryDenyWriteExecute (the V8 JIT needs writable and executable memory)', () => {
    expect(values('MemoryDenyWriteExecute')).toEqual([]);
  });

  it('passes `systemd-analyze verify` without a warning', () => {
    const analyze = findSystemdAnalyze();
    if (!analyze) {
      console.warn('systemd-analyze is not installed here: the unit was not verified by systemd (only its directives were checked)');
      return;
    }
    const r = spawnSync(analyze, ['verify', verifiable(unitText, 'mls.service')], { encoding: 'utf8', cwd: tmp });
    expect(r.stderr + r.stdout).toBe('');
    expect(r.status).toBe(0);
  });

  it('the verify check catches a misspelt directive (so a clean run means something)', () => {
    const analyze = findSystemdAnalyze();
    if (!analyze) {
      console.warn('systemd-analyze is not installed here: skipping the negative verify check');
      return;
    }
    const broken = unitText.replace(/^ProtectSystem=strict$/m, 'ProtectSystm=strict');
    expect(broken).not.toBe(unitText);
    const r = spawnSync(analyze, ['verify', verifiable(broken, 'broken.service')], { encoding: 'utf8', cwd: tmp });
    expect(r.stderr).toMatch(/Unknown key 'ProtectSystm'/);
  });

  it('has a low exposure level in `systemd-analyze security`', () => {
    const analyze = findSystemdAnalyze();
    if (!analyze) {
      console.warn('systemd-analyze is not installed here: the exposure level was not measured');
      return;
    }
    const r = spawnSync(analyze, ['security', '--offline=yes', '--no-pager', verifiable(unitText, 'mls.service')], { encoding: 'utf8', cwd: tmp });
    const m = /Overall exposure level for mls\.service: (\d+(?:\.\d+)?)/.exec(r.stdout);
    if (!m) {
      console.warn(`systemd-analyze security --offline is not supported here: ${r.stderr.trim().slice(0, 200)}`);
      return;
    }
    expect(Number(m[1])).toBeLessThanOrEqual(2.5);
  });
});
