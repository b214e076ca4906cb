// Watching a running daemon: `mls top --once` reads real rates from its admin server,
// `mls tap --limit` prints the records its sinks get (all of them, or narrowed) through its
// control socket, and its log lines for people are readable lines, every one of them kept.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { runMls, startMls, waitFor, writeConfig, type MlsProcess } from './harness.js';

const TOKEN = 'tok-live-view-3c9e71';
const env = { MLS_API_TOKEN: TOKEN };
let dir: string;
let sim: Simulator;
let daemon: MlsProcess;
/** The daemon's config, naming its admin server's actual address. */
let config: string;
let address = '';

function base(admin?: string) {
  return {
    api: { base_url: sim.url, token: '${MLS_API_TOKEN}' },
    state: { path: join(dir, 'state.db') },
    poll: { interval: '300ms', lookback: '2s', settle: '100ms', start_at: '-20s', max_window: '1m', rate_limit: 'none' },
    models: [{ id: 'm1' }, { id: 'm2' }],
    sinks: [
      { name: 'records', type: 'file', path: join(dir, 'records', '{model_id}.ndjson'), batch: { max_delay: '50ms' } },
      { name: 'raw', type: 'file', raw: true, path: join(dir, 'raw', '{model_id}.ndjson'), batch: { max_delay: '50ms' } },
    ],
    ...(admin ? { admin: { listen: admin } } : {}),
    shutdown_timeout: '10s',
  };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-live-'));
  sim = await startSimulator({ token: TOKEN, models: ['m1', 'm2'], ratePerSec: 40, historyMs: 20_000, seed: 11, content: 'python' });
  daemon = startMls(['run', '-c', writeConfig(dir, base('127.0.0.1:0'), 'run.yaml'), '--log-format', 'pretty'], env);
  await waitFor(() => (address = /admin server listening \{[^\n]*"address":"([^"]+)"/.exec(daemon.stderr())?.[1] ?? '') !== '' && daemon.stderr().includes('control socket listening'), 30_000, 'the admin server and the control socket', 100, daemon.stderr);
  config = writeConfig(dir, base(address), 'watch.yaml');
}, 60_000);
afterAll(async () => {
  daemon?.child.kill('SIGKILL');
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The cells of the row of `name` in a frame. */
function row(frame: string, name: string): string[] {
  const line = frame.split('\n').find((l) => l.startsWith(`│ ${name} `));
  return line === undefined ? [] : line.split('│').slice(1, -1).map((c) => c.trim());
}

describe('watching a running daemon', () => {
  it('mls top --once prints one frame with the rates of the last seconds', { timeout: 60_000 }, async () => {
    let frame = '';
    // the rates need two samples a second apart; then both models and both sinks move
    await waitFor(async () => {
      const r = await runMls(['top', '--once', '-c', config], env);
      expect(r.code, r.stderr).toBe(0);
      frame = r.stdout;
      return ['m1', 'm2'].every((m) => Number(row(frame, m)[1]) > 0) && ['records', 'raw'].every((s) => Number(row(frame, s)[2]) > 0);
    }, 30_000, 'rates above 0', 500, () => frame);
    expect(frame.split('\n')[0]).toMatch(new RegExp(`^mls top · daemon at http://${address.replace(/\./g, '\\.')} · rates over the last 10 s · journal \\d+ entries$`));
    expect(row(frame, 'm1')).toEqual([expect.any(String), expect.stringMatching(/^\d+\.\d$/), expect.stringMatching(/^\d+(ms|s)$/), expect.stringMatching(/^\d+\.\d$/), 'polling', '']);
    expect(Number(row(frame, 'm1')[3])).toBeGreaterThan(0); // requests per minute
    expect(row(frame, 'raw').slice(0, 2)).toEqual(['raw', 'file']);
    // the same through --admin, without a config
    const byUrl = await runMls(['top', '--once', '--admin', `http://${address}`], {});
    expect(byUrl.code, byUrl.stderr).toBe(0);
    expect(row(byUrl.stdout, 'records')[0]).toBe('records');
    // a config without an admin server: one line saying how to enable one
    const none = await runMls(['top', '--once', '-c', writeConfig(dir, base(), 'no-admin.yaml')], env);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^mls: .*no-admin\.yaml has no admin server, which mls top reads: add "admin: \{ listen: 127\.0\.0\.1:9464 \}" to it .*\n$/);
  });

  it('mls top without a terminal prints one plain frame after another until interrupted', { timeout: 60_000 }, async () => {
    const top = startMls(['top', '-c', config], env);
    await waitFor(() => top.stdout().split('\nmls top · ').length >= 3, 30_000, 'three frames', 100, top.stderr);
    top.child.kill('SIGINT');
    expect((await top.exited).code).toBe(0);
    // no escape codes (log-update's, to redraw a terminal in place) and no keys line
    expect(top.stdout()).not.toContain('\u001b');
    expect(top.stdout()).not.toMatch(/q: quit/);
    expect(top.stdout().startsWith('mls top · ')).toBe(true);
  });

  it('mls tap --limit prints the records every sink gets, each line naming its sink', { timeout: 60_000 }, async () => {
    const r = await runMls(['tap', '-c', config, '--limit', '40'], env);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { sink: string; model_id: string; log: string; level?: string });
    expect(lines).toHaveLength(40);
    for (const l of lines) expect(['records', 'raw']).toContain(l.sink);
    expect(r.stderr).toBe('mls tap: 40 records shown, 0 dropped\n');
    expect(r.stdout).not.toContain(TOKEN);
  });

  it('mls tap narrows to one sink, one model and a level, as NDJSON or text', { timeout: 60_000 }, async () => {
    const r = await runMls(['tap', '-c', config, '--sink', 'records', '--model', 'm2', '--level', 'warn', '--limit', '3'], env);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(3);
    for (const l of lines) {
      // exactly what the sink gets: no sink named
      expect(Object.keys(l).slice(0, 4)).toEqual(['model_id', 'time', 'stream', 'log']);
      expect(l.model_id).toBe('m2');
      expect(['warn', 'error', 'fatal']).toContain(l.level);
    }
    const text = await runMls(['tap', '-c', config, '--sink', 'raw', '--model', 'm1', '--output', 'text', '--limit', '5'], env);
    expect(text.code, text.stderr).toBe(0);
    const first = text.stdout.split('\n').filter((l) => /^\d{4}-\d\d-\d\dT/.test(l));
    expect(first.length).toBeGreaterThanOrEqual(1);
    for (const l of first) expect(l).toMatch(/^\S+Z m1 std(out|err) /);
    const unknown = await runMls(['tap', '-c', config, '--sink', 'nowhere', '--limit', '1'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--sink: nowhere is not a sink of');
  });

  it('its log lines are readable lines, the last of them written before it exits', { timeout: 60_000 }, async () => {
    daemon.child.kill('SIGTERM');
    const end = await daemon.exited;
    expect(end.code, daemon.stderr()).toBe(0);
    const lines = daemon.stderr().trimEnd().split('\n');
    expect(lines.find((l) => l.includes('mls daemon started'))).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: mls daemon started \{"models":2,"sinks":\["records","raw"\],/);
    expect(lines.at(-1)).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: stopped$/);
    for (const l of lines) expect(l.startsWith('{'), l).toBe(false);
    expect(daemon.stderr()).not.toContain(TOKEN);
  });
});
