//! `mls validate --check-sinks`, run as the real command: each sink's healthcheck is
//! printed, a failing one makes the command exit 1, and sinks built for the check take no
//! state and write nothing. Without the flag, validate touches no sink.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, onTestFinished, test, vi } from 'vitest';
import { runMls, writeConfig } from '../e2e/harness.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'mls-check-sinks-'));
  dirs.push(d);
  return d;
}

/** A TCP listener on 127.0.0.1 that counts connections and the bytes sent on them. */
async function listener(): Promise<{ port: number; connections: () => number; bytes: () => number; close(): Promise<void> }> {
  let connections = 0;
  let bytes = 0;
  const server: Server = createServer((socket) => {
    connections++;
    socket.on('data', (d: Buffer) => (bytes += d.length));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { port, connections: () => connections, bytes: () => bytes, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** A port on 127.0.0.1 that nothing listens on (it was just let go). */
async function closedPort(): Promise<number> {
  const l = await listener();
  await l.close();
  return l.port;
}

const config = (dir: string, sinks: unknown[]) => ({
  api: { base_url: 'https://api.example.com', token: 'check-token-8f2a1' },
  state: { path: join(dir, 'state.db') },
  models: [{ id: 'm1' }, { id: 'm2' }],
  sinks,
});

describe('mls validate --check-sinks', () => {
  test('without the flag, validate connects to no sink', async () => {
    const dir = tmp();
    const receiver = await listener();
    onTestFinished(() => receiver.close());
    const file = writeConfig(dir, config(dir, [{ name: 'hook', type: 'webhook', url: `http://127.0.0.1:${receiver.port}/in` }]));
    const r = await runMls(['validate', '--config', file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('config OK: 2 models, 1 sink (hook)\n');
    expect(receiver.connections()).toBe(0);
  });

  test('a webhook at a closed port fails the check: each sink is printed and validate exits 1', async () => {
    const dir = tmp();
    const receiver = await listener();
    onTestFinished(() => receiver.close());
    const dead = await closedPort();
    const file = writeConfig(
      dir,
      config(dir, [
        { name: 'live', type: 'webhook', url: `http://127.0.0.1:${receiver.port}/in` },
        { name: 'dead', type: 'webhook', url: `http://127.0.0.1:${dead}/in`, headers: { Authorization: 'Bearer hook-secret-77c1' } },
      ]),
    );
    const r = await runMls(['validate', '--config', file, '--check-sinks']);
    expect(r.code, r.stderr).toBe(1);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('config OK: 2 models, 2 sinks (live, dead)');
    expect(lines[1]).toBe(`sink live (webhook): ok, 127.0.0.1:${receiver.port} reachable`);
    expect(lines[2]).toMatch(new RegExp(`^sink dead \\(webhook\\): FAILED, 127\\.0\\.0\\.1:${dead}: .*ECONNREFUSED`));
    expect(lines).toHaveLength(3);
    // the check only connects: the receiver gets a connection and no request
    await vi.waitFor(() => expect(receiver.connections()).toBe(1), { timeout: 10_000 });
    expect(receiver.bytes()).toBe(0);
    for (const text of [r.stdout, r.stderr]) {
      expect(text).not.toContain('hook-secret-77c1');
      expect(text).not.toContain('check-token-8f2a1');
    }
  });

  test('a file sink is checked without creating, truncating or writing anything', async () => {
    const dir = tmp();
    mkdirSync(join(dir, 'out'));
    // m1's file holds a line no committed state knows of: opening the sink for delivery would keep or cut it; a check leaves it alone
    writeFileSync(join(dir, 'out', 'm1.ndjson'), '{"log":"kept"}\n{"log":"half a li');
    const before = statSync(join(dir, 'out', 'm1.ndjson'));
    const file = writeConfig(
      dir,
      config(dir, [
        { name: 'archive', type: 'file', path: 'out/{model_id}.ndjson', rotate: { max_bytes: 10 }, compress: 'gzip' },
        { name: 'deep', type: 'file', path: 'new/deeper/{model_id}/%Y.ndjson' },
      ]),
    );
    const r = await runMls(['validate', '--config', file, '--check-sinks']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n').slice(1)).toEqual([`sink archive (file): ok, ${join(dir, 'out')} is writable`, `sink deep (file): ok, ${dir} is writable`, '']);
    expect(readdirSync(dir).sort()).toEqual(['mls.yaml', 'out']);
    expect(readdirSync(join(dir, 'out'))).toEqual(['m1.ndjson']);
    expect(readFileSync(join(dir, 'out', 'm1.ndjson'), 'utf8')).toBe('{"log":"kept"}\n{"log":"half a li');
    expect(statSync(join(dir, 'out', 'm1.ndjson')).mtimeMs).toBe(before.mtimeMs);
  });

  test('a file sink whose folder cannot be written fails the check', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'not-a-dir'), '');
    const file = writeConfig(dir, config(dir, [{ name: 'archive', type: 'file', path: 'not-a-dir/{model_id}.ndjson' }]));
    const r = await runMls(['validate', '--config', file, '--check-sinks']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain(`sink archive (file): FAILED, ${join(dir, 'not-a-dir')} is not a directory\n`);
  });

  test('a module sink is built with checkOnly, no state and no commitState, and creates nothing', async () => {
    const dir = tmp();
    writeFileSync(
      join(dir, 'probe-sink.mjs'),
      `export default (options, context) => ({
  healthcheck: async () => ({ ok: true, detail: 'checkOnly=' + context.checkOnly + ' state=' + context.state + ' commitState=' + typeof context.commitState }),
  send: async () => ({ status: 'ok' }),
  flush: async () => {},
  close: async () => {},
});
`,
    );
    const example = fileURLToPath(new URL('../../config/examples/custom-sink.example.js', import.meta.url));
    const file = writeConfig(
      dir,
      config(dir, [
        { name: 'probe', type: 'module', path: './probe-sink.mjs' },
        { name: 'example', type: 'module', path: example, options: { path: join(dir, 'custom.ndjson') } },
      ]),
    );
    const r = await runMls(['validate', '--config', file, '--check-sinks']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n').slice(1)).toEqual([
      'sink probe (module): ok, checkOnly=true state=undefined commitState=undefined',
      `sink example (module): ok, ${dir} is writable`,
      '',
    ]);
    expect(existsSync(join(dir, 'custom.ndjson'))).toBe(false);
    expect(existsSync(join(dir, 'state.db'))).toBe(false);
  });
});
