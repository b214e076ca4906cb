// A frame of `mls top`: every model and sink with its rates, trouble first (an error, a
// pause, a blocked journal, a growing backlog), or by name, or by rate.
import { describe, expect, it } from 'vitest';
import { renderFrame } from '../../src/cli/top-view.js';
import type { DaemonStatus } from '../../src/daemon/status.js';

function status(over: { full?: boolean } = {}): DaemonStatus {
  const model = (id: string, more: Partial<DaemonStatus['models'][number]> = {}) => ({ id, startMs: 0, watermarkMs: 0, lagSeconds: 2, window: undefined, lastError: undefined, paused: false, entriesPerSecond: 5, requestsPerMinute: 60, ...more });
  const sink = (name: string, more: Partial<DaemonStatus['sinks'][number]> = {}) => ({
    name,
    type: 'file',
    cursor: 10,
    backlogEntries: 0,
    deliveredEntries: 10,
    droppedEntries: 0,
    deadLetters: 0,
    lastError: undefined,
    failingSeconds: undefined,
    recordsPerSecond: 4,
    backlogPerSecond: 0,
    inFlightEntries: 0,
    retries: 0,
    ...more,
  });
  return {
    installationId: 'x',
    models: [model('a-fast', { entriesPerSecond: 90 }), model('b-paused', { paused: true }), model('c-ok'), model('d-failing', { lastError: 'HTTP 503' })],
    sinks: [sink('a-files'), sink('b-hook', { type: 'webhook', backlogEntries: 500, backlogPerSecond: 40, inFlightEntries: 100, retries: 3, deadLetters: 7 }), sink('c-otlp', { recordsPerSecond: 50 })],
    journal: { entries: 500, bytes: 1, lastSeq: 1, full: over.full },
    ratesWindowSeconds: 10,
  };
}

/** The first cell of each row of the table whose head starts with `head`. */
function order(frame: string, head: string): string[] {
  const tables = frame.split(/(?=┌)/);
  const table = tables.find((t) => t.includes(`│ ${head}`))!;
  return [...table.matchAll(/^│ ([\w-]+) /gm)].map((m) => m[1]!).filter((c) => c !== head);
}

describe('a frame of mls top', () => {
  it('puts models and sinks in trouble first, each with its rates and state', () => {
    const frame = renderFrame(status(), { source: 'daemon at 127.0.0.1:9464', sort: 'trouble' });
    expect(frame.split('\n')[0]).toBe('mls top · daemon at 127.0.0.1:9464 · rates over the last 10 s · journal 500 entries');
    expect(order(frame, 'MODEL')).toEqual(['b-paused', 'd-failing', 'a-fast', 'c-ok']);
    expect(order(frame, 'SINK')).toEqual(['b-hook', 'a-files', 'c-otlp']);
    expect(frame).toMatch(/│ a-fast\s+│ 90\.0\s+│ 2s\s+│ 60\.0\s+│ polling\s+│/);
    expect(frame).toMatch(/│ b-paused .*│ paused /);
    expect(frame).toMatch(/│ d-failing .*│ HTTP 503 /);
    expect(frame).toMatch(/│ b-hook\s+│ webhook │ 4\.0\s+│ 500 \(growing\)\s+│ 100\s+│ 3\s+│ 7\s+│/);
  });

  it('shows every model blocked while the journal is full', () => {
    const frame = renderFrame(status({ full: true }), { source: 's', sort: 'trouble' });
    expect(frame).toContain('journal 500 entries (full: polling waits)');
    expect(frame).toMatch(/│ c-ok .*│ blocked /);
  });

  it('sorts by name or by rate when asked, and names the keys in the live view', () => {
    expect(order(renderFrame(status(), { source: 's', sort: 'name' }), 'MODEL')).toEqual(['a-fast', 'b-paused', 'c-ok', 'd-failing']);
    const byRate = renderFrame(status(), { source: 's', sort: 'rate', keys: true });
    expect(order(byRate, 'MODEL')[0]).toBe('a-fast');
    expect(order(byRate, 'SINK')[0]).toBe('c-otlp');
    expect(byRate.split('\n').at(-1)).toBe('sorted by rate · s: sort by trouble · q: quit');
  });
});
