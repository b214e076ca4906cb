//! The `python` content profile: a Python model server's output one line per entry, tracebacks
//! as consecutive entries that the project's own processing turns into one record each.
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { ModelProcessor, type ProcessedRecord } from '../../src/processing/pipeline.js';
import { entryTimeNs } from '../../src/time/timestamp.js';
import type { LogEntry } from '../../src/records/entry.js';
import { TOKEN, bag, canonical, fetchWindow } from './helpers.js';

const T0 = Date.parse('2026-11-25T16:30:00.000Z');
const HISTORY = 15 * 60_000;

let sims: Simulator[] = [];
async function start(o: Partial<SimulatorOptions> = {}): Promise<Simulator> {
  const sim = await startSimulator({ token: TOKEN, models: ['m1', 'm2'], ratePerSec: 20, historyMs: HISTORY, seed: 5, clock: () => T0, content: 'python', ...o });
  sims.push(sim);
  return sim;
}
afterEach(async () => {
  await Promise.all(sims.map((s) => s.close()));
  sims = [];
});

/** Every entry of the window through the service's pages, fed page by page to a processor. */
async function processServed(sim: Simulator, modelId: string): Promise<{ entries: LogEntry[]; records: ProcessedRecord[] }> {
  const processor = new ModelProcessor();
  const records: ProcessedRecord[] = [];
  const entries: LogEntry[] = [];
  let seq = 0;
  // One window per minute, as a poller reads them; pages stay whole, in time order between pages.
  for (let from = T0 - HISTORY; from < T0; from += 60_000) {
    const page = await fetchWindow(sim.url, modelId, from, Math.min(from + 60_000, T0) - 1);
    entries.push(...page.entries);
    const lines = page.entries.map((e) => ({ seq: ++seq, timeNs: entryTimeNs(e.time)!, time: e.time, stream: e.stream, log: e.log }));
    records.push(...processor.push(lines).records);
  }
  records.push(...processor.flush().records);
  return { entries, records };
}

const HEADING = /^(ERROR:|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[,.]\d{3} (- [\w.]+ - |\| )ERROR|ERROR \d\d-\d\d )/;

describe('python content', () => {
  it('writes what a Python model server writes, one line per entry, on the streams its libraries use', async () => {
    const sim = await start();
    const truth = sim.groundTruth('m1');
    expect(truth.length).toBeGreaterThan(10_000);
    expect(truth.filter((e) => e.log.includes('\n'))).toEqual([]);
    const on = (re: RegExp, stream?: string) => {
      const hits = truth.filter((e) => re.test(e.log));
      expect(hits.length, String(re)).toBeGreaterThan(0);
      if (stream) expect(new Set(hits.map((e) => e.stream)), String(re)).toEqual(new Set([stream]));
      return hits;
    };
    // A model starts with its start-up burst: checkpoint shards, then uvicorn.
    expect(truth[0]!.log).toMatch(/^Loading checkpoint shards: {3}0%\|/);
    on(/^Loading checkpoint shards: +\d+%\|[█▏▎▍▌▋▊▉ ]{10}\| \d\/\d \[\d\d:\d\d<(\d\d:\d\d|\?), +(\d+\.\d\ds|\?)/, 'stderr');
    on(/^INFO: {5}Started server process \[\d+\]$/, 'stderr');
    on(/^INFO: {5}Uvicorn running on http:\/\/0\.0\.0\.0:8000 \(Press CTRL\+C to quit\)$/, 'stderr');
    const access = on(/^INFO: {5}10\.0\.\d+\.\d+:\d+ - "(GET|POST) \/[\w/]+ HTTP\/1\.1" \d{3} [A-Z]/, 'stderr');
    expect(access.length / truth.length).toBeGreaterThan(0.2);
    on(/^(INFO|WARNING|DEBUG):(root|app[\w.]*):\S/, 'stderr');
    const asctime = on(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - [\w.]+ - (INFO|WARNING|DEBUG|ERROR) - \S/, 'stderr');
    on(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \| (INFO|WARNING|DEBUG|SUCCESS|ERROR) +\| [\w.]+:\w+:\d+ - \S/, 'stderr');
    on(/^INFO \d\d-\d\d \d\d:\d\d:\d\d \[metrics\.py:455\] Avg prompt throughput: /, 'stdout');
    on(/^WARNING \d\d-\d\d \d\d:\d\d:\d\d \[scheduler\.py:\d+\] /, 'stdout');
    on(/^Some weights of \w+ were not initialized from the model checkpoint at /, 'stderr');
    on(/^Setting `pad_token_id` to `eos_token_id`/, 'stderr');
    on(/^\/usr\/local\/lib\/python3\.11\/site-packages\/[\w/]+\.py:\d+: \w+Warning: /, 'stderr');
    on(/^Generated \d+ tokens in /, 'stdout');
    on(/[^\x00-\x7f]/);
    on(/"hi".*\\.*\t/);
    on(/^ {4}[ ]*~*\^+~*$/);
    on(/^The above exception was the direct cause of the following exception:$/);
    on(/^During handling of the above exception, another exception occurred:$/);
    on(/^(RuntimeError: CUDA out of memory|torch\.OutOfMemoryError: CUDA out of memory)\. /);
    const structlog = on(/^\{"event": /, 'stdout').map((e) => JSON.parse(e.log) as Record<string, unknown>);
    expect(structlog.every((j) => typeof j.level === 'string' && typeof j.timestamp === 'string')).toBe(true);
    const jsonLogger = on(/^\{"asctime": /, 'stderr').map((e) => JSON.parse(e.log) as Record<string, unknown>);
    expect(jsonLogger.every((j) => /^[0-9a-f]{32}$/.test(String(j.trace_id)) && /^[0-9a-f]{16}$/.test(String(j.span_id)))).toBe(true);
    expect(jsonLogger.some((j) => String(j.exc_info).startsWith('Traceback (most recent call last):\n'))).toBe(true);
    // The time in the text is the entry's own, as the application wrote it.
    for (const e of asctime.slice(0, 200)) expect(e.log.slice(0, 23).replace(' ', 'T').replace(',', '.')).toBe(canonical(e.time).slice(0, 23));
  });

  it('is deterministic for a seed, and a model writes the same whatever the other models are', async () => {
    const o = { order: 'shuffled', pageSize: { min: 10, max: 60 }, ingestDelayMs: { min: 0, max: 5_000 }, twinRate: 0.05, historyMs: 120_000 } as const;
    const a = await start({ ...o, seed: 42 });
    const b = await start({ ...o, seed: 42 });
    const c = await start({ ...o, seed: 43 });
    const d = await start({ ...o, seed: 42, models: ['x', 'm2'] });
    expect(a.groundTruth()).toEqual(b.groundTruth());
    expect(a.tracebackEpisodes()).toEqual(b.tracebackEpisodes());
    expect(a.groundTruth()).not.toEqual(c.groundTruth());
    expect(d.groundTruth('m2')).toEqual(a.groundTruth('m2'));
    const pa = await fetchWindow(a.url, 'm2', T0 - 120_000, T0);
    const pb = await fetchWindow(b.url, 'm2', T0 - 120_000, T0);
    expect(pa.entries).toEqual(pb.entries);
    expect(pa.pages).toBe(pb.pages);
    expect(bag(pa.entries)).toEqual(bag(a.groundTruth('m2')));
  });

  it('writes each traceback as consecutive entries of one stream, moments apart, in time order', async () => {
    const sim = await start({ twinRate: 0.05, shortDigitsRate: 0.3 });
    for (const id of ['m1', 'm2']) {
      const episodes = sim.tracebackEpisodes(id);
      expect(episodes.length).toBeGreaterThan(10);
      const truth = sim.groundTruth(id);
      for (const ep of episodes) {
        const stream = truth.filter((e) => e.stream === ep.stream);
        const first = stream.findIndex((e) => e.time === ep.time && HEADING.test(e.log));
        expect(first, ep.time).toBeGreaterThanOrEqual(0);
        const lines = stream.slice(first, first + ep.lines);
        expect(lines.at(-1)!.time).toBe(ep.timeEnd);
        expect(lines[1]!.log).toBe('Traceback (most recent call last):');
        expect(lines.at(-1)!.log).toMatch(/^[A-Za-z_][\w.]*: \S/);
        expect(ep.lines).toBeGreaterThanOrEqual(5);
        expect(ep.lines).toBeLessThanOrEqual(60);
        const ns = lines.map((e) => entryTimeNs(e.time)!);
        for (let k = 1; k < ns.length; k++) expect(ns[k]! > ns[k - 1]!).toBe(true);
        expect(Number(ns.at(-1)! - ns[0]!)).toBeLessThan(10_000_000);
      }
    }
    // Identical lines at identical times still occur (single-line events only).
    const keys = sim.groundTruth('m1').map((e) => JSON.stringify([e.time, e.stream, e.log]));
    expect(new Set(keys).size).toBeLessThan(keys.length);
  });

  it('gives the processing library one error record per traceback episode, levels from the text, JSON attributes', async () => {
    const sim = await start({ order: 'shuffled', pageSize: { min: 20, max: 300 }, ingestDelayMs: { min: 0, max: 3_000 }, twinRate: 0.02 });
    for (const id of ['m1', 'm2']) {
      const { entries, records } = await processServed(sim, id);
      expect(bag(entries)).toEqual(bag(sim.groundTruth(id)));
      const episodes = sim.tracebackEpisodes(id);
      expect(episodes.length).toBeGreaterThan(10);
      const grouped = records.filter((r) => (r.lines ?? 1) > 1);
      expect(grouped.map((r) => ({ time: r.time, timeEnd: r.timeEnd, stream: r.stream, lines: r.lines, level: r.level }))).toEqual(
        episodes.map((e) => ({ time: e.time, timeEnd: e.timeEnd, stream: e.stream, lines: e.lines, level: 'error' })),
      );
      expect(records.reduce((n, r) => n + (r.lines ?? 1), 0)).toBe(entries.length);
      expect(sim.stats().tracebacksServed[id]).toBe(episodes.length);

      const levelOf = (re: RegExp) => new Set(records.filter((r) => re.test(r.log)).map((r) => r.level));
      expect(levelOf(/^INFO: {5}/)).toEqual(new Set(['info']));
      expect(levelOf(/^INFO \d\d-\d\d /)).toEqual(new Set(['info']));
      expect(levelOf(/^WARNING:/)).toEqual(new Set(['warn']));
      expect(levelOf(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - [\w.]+ - WARNING - /)).toEqual(new Set(['warn']));
      expect(levelOf(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \| WARNING  \| /)).toEqual(new Set(['warn']));
      expect(levelOf(/^\S+\.py:\d+: \w+Warning: /)).toEqual(new Set(['warn']));
      expect(levelOf(/^(Generated |batch=|Loading checkpoint)/)).toEqual(new Set([undefined]));

      const structlog = records.filter((r) => r.log.startsWith('{"event": "request done"'));
      expect(structlog.length).toBeGreaterThan(0);
      for (const r of structlog) {
        expect(r).toMatchObject({ level: 'info', message: 'request done' });
        expect(r.attributes).toMatchObject({ latency_ms: expect.any(Number), route: expect.any(String), tokens: expect.any(Number) });
      }
      const jsonLogger = records.filter((r) => r.log.startsWith('{"asctime": '));
      expect(jsonLogger.length).toBeGreaterThan(0);
      for (const r of jsonLogger) {
        expect(r.traceId).toMatch(/^[0-9a-f]{32}$/);
        expect(r.spanId).toMatch(/^[0-9a-f]{16}$/);
        expect(r.attributes).toMatchObject({ name: expect.any(String) });
      }
      expect(new Set(jsonLogger.map((r) => r.level))).toEqual(new Set(['info', 'warn', 'error']));
    }
  });

  it('raises the mix of exceptions a model server raises, chained ones included, each named in its record', async () => {
    const sim = await start({ ratePerSec: 100, models: ['m1'] });
    const { records } = await processServed(sim, 'm1');
    const tracebacks = records.filter((r) => (r.lines ?? 1) > 1);
    expect(tracebacks.length).toBe(sim.tracebackEpisodes('m1').length);
    const types = new Map<string, number>();
    for (const r of tracebacks) {
      // The exception is the last line's, as printed; the chain the earlier exception lines' (after the heading line).
      const exceptionLines = r.log.split('\n').slice(1).filter((l) => /^[A-Za-z_][\w.]*: /.test(l));
      expect(exceptionLines.at(-1)).toBe(`${r.exception!.type}: ${r.exception!.message}`);
      expect(r.exception!.chain ?? []).toEqual(exceptionLines.slice(0, -1).map((l) => l.slice(0, l.indexOf(':'))));
      types.set(r.exception!.type, (types.get(r.exception!.type) ?? 0) + 1);
    }
    const share = (type: string) => (types.get(type) ?? 0) / tracebacks.length;
    expect(share('torch.OutOfMemoryError') + share('RuntimeError')).toBeGreaterThan(0.25);
    for (const type of ['KeyError', 'json.decoder.JSONDecodeError', 'ValueError', 'ZeroDivisionError']) expect(share(type), type).toBeGreaterThan(0.02);
    expect(tracebacks.some((r) => r.exception!.type === 'KeyError' && r.exception!.message === "'input_ids'")).toBe(true);
    const chains = new Set(tracebacks.flatMap((r) => r.exception!.chain ?? []));
    expect(chains).toEqual(new Set(['KeyError', 'json.decoder.JSONDecodeError', 'httpx.ConnectError']));
  });

  it('counts a traceback served once every line has been, whatever the windows, and never twice', async () => {
    const sim = await start({ ratePerSec: 200, historyMs: 60_000, models: ['m1'] });
    const episodes = sim.tracebackEpisodes('m1');
    expect(episodes.length).toBeGreaterThan(5);
    // Cut the window inside an episode: it counts only once its second half is served.
    const msOf = (time: string): number => Number(entryTimeNs(time)! / 1_000_000n);
    const split = episodes.find((e, k) => k > 0 && msOf(e.timeEnd) > msOf(e.time))!;
    const cutMs = msOf(split.time) + 1;
    await fetchWindow(sim.url, 'm1', T0 - 60_000, cutMs - 1);
    const before = episodes.filter((e) => msOf(e.timeEnd) < cutMs).length;
    expect(before).toBe(episodes.indexOf(split));
    expect(sim.stats().tracebacksServed.m1).toBe(before);
    await fetchWindow(sim.url, 'm1', cutMs, T0);
    expect(sim.stats().tracebacksServed.m1).toBe(episodes.length);
    await fetchWindow(sim.url, 'm1', T0 - 60_000, T0);
    expect(sim.stats().tracebacksServed.m1).toBe(episodes.length);
  });

  it('leaves plain content the default, with no episodes to count', async () => {
    const sim = await startSimulator({ token: TOKEN, models: ['m1'], ratePerSec: 20, historyMs: 60_000, seed: 5, clock: () => T0 });
    sims.push(sim);
    await fetchWindow(sim.url, 'm1', T0 - 60_000, T0);
    expect(sim.tracebackEpisodes()).toEqual([]);
    expect(sim.stats().tracebacksServed).toEqual({});
    expect(sim.groundTruth('m1').some((e) => e.log.startsWith('Traceback (most recent call last):\n'))).toBe(true);
    await expect(startSimulator({ token: TOKEN, models: ['m1'], ratePerSec: 1, content: 'rust' as 'plain' })).rejects.toThrow(/content must be 'plain' or 'python'/);
  });
});
