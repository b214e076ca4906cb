// A service whose next_token leads back to a token already followed in the same window
// (A → B → A …): the daemon takes the page that returned it as the window's last, so each
// entry reaches the file once, the cycle is counted and logged once per window, and later
// windows are polled. The tokens followed are stored with the checkpoint: a daemon killed
// in the middle of such a window still recognises the cycle after its restart.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { parseConfig } from '../../src/cli/config.js';
import { Daemon } from '../../src/daemon/index.js';
import { StateReader } from '../../src/journal/reader.js';
import { entriesIn, entryAt, page, startHostileService, type HostileService, type LogsCall, type WireEntry } from '../helpers/hostile-service.js';
import { entryKey, readNdjsonTree, readState, sleep, startMls, waitFor, writeConfig } from './harness.js';

const TOKEN = 'tok-cycle-test-41c2';
let dir: string;
let service: HostileService | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-cycle-'));
});
afterEach(async () => {
  await service?.close();
  service = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** Answers every window with three pages, the third pointing back to the first token: none → A → B → A. */
function cycling(entries: readonly WireEntry[]) {
  return (call: LogsCall) => {
    const [first, second, third] = [0, 1, 2].map((i) => entriesIn(entries.slice(i, i + 1), call));
    if (call.nextToken === undefined) return { body: page(first!, 'A') };
    if (call.nextToken === 'A') return { body: page(second!, 'B') };
    return { body: page(third!, 'A') };
  };
}

function counts(lines: Array<{ model_id: string; time: string; stream: string; log: string }>): Map<string, number> {
  const out = new Map<string, number>();
  for (const l of lines) out.set(entryKey(l), (out.get(entryKey(l)) ?? 0) + 1);
  return out;
}

describe('a next_token that leads back to a token already followed (A → B → A)', () => {
  it('ends the window at the page that closes the cycle: each entry once, one warning per window, later windows polled', { timeout: 30_000 }, async () => {
    const t0 = Date.now() - 3_000;
    const entries = [entryAt(t0 + 500, 'first page'), entryAt(t0 + 600, 'second page'), entryAt(t0 + 700, 'third page')];
    service = await startHostileService(cycling(entries));
    const logs: string[] = [];
    const config = parseConfig(
      {
        api: { base_url: service.url, token: TOKEN },
        state: { path: join(dir, 'state.db') },
        poll: { interval: '300ms', lookback: '2s', settle: '100ms', start_at: new Date(t0).toISOString(), max_window: '1m', rate_limit: 'none', jitter: 0, reread: { ages: ['1s'] } },
        models: [{ id: 'm' }],
        sinks: [{ name: 'files', type: 'file', path: join(dir, 'out', '{model_id}.ndjson'), batch: { max_delay: '50ms' } }],
      },
      { baseDir: dir, env: {} },
    );
    const daemon = await Daemon.start({ config, logger: pino({ level: 'info' }, { write: (l: string) => void logs.push(l) }) });
    const started = Date.now();
    try {
      // Windows keep coming: the watermark passes a moment well after the start.
      await waitFor(() => (readState(config.state.path)?.watermarks.get('m') ?? 0) > started + 1_000, 15_000, 'later windows', 100, () => `calls: ${service!.calls.length}`);
    } finally {
      await daemon.stop();
    }
    const metrics = await daemon.metrics.text();
    const lines = readNdjsonTree(join(dir, 'out'));
    const got = counts(lines);
    expect(lines).toHaveLength(3);
    for (const e of entries) expect(got.get(entryKey({ model_id: 'm', ...e }))).toBe(1);

    // Three requests per window (none, A, B); A is never asked for twice in one window.
    const calls = service.calls;
    const windows = calls.filter((c) => c.nextToken === undefined).length;
    expect(windows).toBeGreaterThanOrEqual(3);
    expect(calls.filter((c) => c.nextToken === 'A').length).toBeLessThanOrEqual(windows);
    expect(calls.filter((c) => c.nextToken === 'B').length).toBeLessThanOrEqual(windows);
    const cycles = Number(/^mls_token_cycles_total\{model="m"\} (\d+)$/m.exec(metrics)?.[1]);
    const warnings = logs.filter((l) => l.includes('already followed in this window')).length;
    expect(cycles).toBe(warnings);
    // Every window that got to its third page closed the cycle once (one may have been cut by the stop).
    expect(cycles).toBeGreaterThanOrEqual(calls.filter((c) => c.nextToken === 'B').length - 1);
    expect(cycles).toBeGreaterThanOrEqual(2);
    console.log(`token cycle: ${windows} windows, ${calls.length} requests, ${cycles} cycles counted and logged, ${lines.length} lines for 3 entries`);
  });

  it('recognises the cycle after a SIGKILL in the middle of the window', { timeout: 40_000 }, async () => {
    const t0 = Date.now() - 3_000;
    const entries = [entryAt(t0 + 500, 'first page'), entryAt(t0 + 600, 'second page'), entryAt(t0 + 700, 'third page')];
    const normal = cycling(entries);
    let hangOnB = true;
    service = await startHostileService((call) => (hangOnB && call.nextToken === 'B' ? { hang: true } : normal(call)));
    const statePath = join(dir, 'state', 'state.db');
    const configPath = writeConfig(dir, {
      api: { base_url: service.url, token: '${MLS_API_TOKEN}' },
      state: { path: statePath },
      poll: { interval: '300ms', lookback: '2s', settle: '100ms', start_at: new Date(t0).toISOString(), max_window: '1m', rate_limit: 'none', jitter: 0, reread: { ages: ['1s'] } },
      models: [{ id: 'm' }],
      sinks: [{ name: 'files', type: 'file', path: join(dir, 'out', '{model_id}.ndjson'), batch: { max_delay: '50ms' } }],
      log: { level: 'info' },
    });
    const env = { MLS_API_TOKEN: TOKEN };
    const first = startMls(['run', '--config', configPath], env);
    // The first window waits for the page of token B, with B stored as the next token.
    const storedToken = (): string | undefined => {
      try {
        const store = StateReader.open(statePath);
        try {
          return store.getCheckpoint('m')?.window?.nextToken;
        } finally {
          store.close();
        }
      } catch {
        return undefined;
      }
    };
    await waitFor(() => storedToken() === 'B', 15_000, 'the window to wait on token B', 50, () => first.stderr());
    first.child.kill('SIGKILL');
    await first.exited;
    const window = service.calls.find((c) => c.nextToken === 'B')!;
    const before = service.calls.length;

    hangOnB = false;
    const second = startMls(['run', '--config', configPath], env);
    try {
      await waitFor(() => service!.calls.slice(before).some((c) => c.nextToken === undefined && c.fromMs > window.fromMs), 15_000, 'a later window after the restart', 50, () => second.stderr());
      await waitFor(() => readNdjsonTree(join(dir, 'out')).length >= 3, 10_000, 'the third entry in the file', 50);
      await sleep(300);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
    const resumed = service.calls.slice(before).filter((c) => c.fromMs === window.fromMs && c.toMs === window.toMs);
    // Resumed from token B; its page points back to A, followed before the kill: not asked for again.
    expect(resumed.map((c) => c.nextToken)).toEqual(['B']);
    const lines = readNdjsonTree(join(dir, 'out'));
    expect(lines).toHaveLength(3);
    const got = counts(lines);
    for (const e of entries) expect(got.get(entryKey({ model_id: 'm', ...e }))).toBe(1);
    expect(second.stderr()).toMatch(/"cycleLength":2[^\n]*already followed in this window/);
    console.log(`token cycle after SIGKILL: the resumed window asked for ${JSON.stringify(resumed.map((c) => c.nextToken))}, ${lines.length} lines for 3 entries`);
  });
});
