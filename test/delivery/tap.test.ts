// The daemon's taps: every batch counted per sink, copied to each tap client as the NDJSON
// lines the sink gets, narrowed by sink, model and level; a client that cannot take more
// loses records, counted and told, and nothing a tap does reaches the delivery.
import { describe, expect, it } from 'vitest';
import { TapHub, type TapEvent } from '../../src/delivery/tap.js';
import type { SinkBatch, SinkEntry } from '../../src/sinks/contract.js';
import { entryToNdjson } from '../../src/records/ndjson.js';

function entry(seq: number, modelId: string, log: string, level?: SinkEntry['level']): SinkEntry {
  return { seq, modelId, time: `2025-01-01T00:00:0${seq}Z`, timeNs: BigInt(seq), stream: 'stdout', log, fetchedAtMs: 0, ...(level ? { level } : {}) };
}

/** A batch as the journal hands it: NDJSON chunks, one per model. */
function batch(entries: SinkEntry[]): SinkBatch {
  const models = [...new Set(entries.map((e) => e.modelId))];
  return {
    id: 'b',
    firstSeq: entries[0]!.seq,
    lastSeq: entries.at(-1)!.seq,
    count: entries.length,
    entries,
    ndjson: models.map((modelId) => {
      const mine = entries.filter((e) => e.modelId === modelId);
      return { modelId, firstSeq: mine[0]!.seq, bytes: Buffer.from(mine.map(entryToNdjson).join('')), timesNs: BigInt64Array.from(mine, (e) => e.timeNs) };
    }),
  };
}

const sample = () => batch([entry(1, 'm1', 'starting', 'info'), entry(2, 'm1', 'boom', 'error'), entry(3, 'm2', 'debugging', 'debug'), entry(4, 'm2', 'no level')]);

/** Starts a tap with `args`; returns what it got and how to end it. */
function tap(hub: TapHub, args: unknown, accept: () => boolean = () => true) {
  const events: TapEvent[] = [];
  const stop = new AbortController();
  const result = hub.serve(args, (e) => accept() && events.push(e) > 0, stop.signal);
  const lines = () => events.flatMap((e) => e.lines.split('\n').filter(Boolean).map((l) => ({ sink: e.sink, ...(JSON.parse(l) as { model_id: string; log: string; level?: string }) })));
  return { events, lines, end: () => (stop.abort(), result) };
}

describe('taps', () => {
  it('count every batch per sink, with or without a tap', () => {
    const counted: Array<[string, number]> = [];
    const hub = new TapHub((sink, n) => counted.push([sink, n]));
    hub.offer('files', sample());
    hub.offer('hook', { id: 'r', firstSeq: 1, lastSeq: 2, entries: [entry(1, 'm1', 'a'), entry(2, 'm1', 'b')] });
    expect(counted).toEqual([
      ['files', 4],
      ['hook', 2],
    ]);
  });

  it('copy the lines as the sink gets them, narrowed by sink, model and level', async () => {
    const hub = new TapHub();
    const all = tap(hub, {});
    const oneSink = tap(hub, { sink: 'hook' });
    const m2 = tap(hub, { model: 'm2' });
    const warnings = tap(hub, { level: 'warn' });
    const infoOfM1 = tap(hub, { model: 'm1', level: 'info', sink: 'files' });
    hub.offer('files', sample());
    hub.offer('hook', batch([entry(5, 'm1', 'to the hook', 'warn')]));
    expect(all.lines().map((l) => `${l.sink} ${l.log}`)).toEqual(['files starting', 'files boom', 'files debugging', 'files no level', 'hook to the hook']);
    expect(all.events[0]!.lines).toBe(sample().ndjson!.map((c) => c.bytes.toString()).join(''));
    expect(oneSink.lines().map((l) => l.log)).toEqual(['to the hook']);
    expect(m2.lines().map((l) => l.log)).toEqual(['debugging', 'no level']);
    expect(warnings.lines().map((l) => l.log)).toEqual(['boom', 'to the hook']);
    expect(infoOfM1.lines().map((l) => l.log)).toEqual(['starting', 'boom']);
    for (const t of [all, oneSink, m2, warnings, infoOfM1]) expect(await t.end()).toEqual({ dropped: 0 });
    // ended taps get nothing more
    hub.offer('files', sample());
    expect(all.events).toHaveLength(2);
  });

  it('count what a client could not take, tell it with the next event, and answer it at the end', async () => {
    const hub = new TapHub();
    let room = false;
    const slow = tap(hub, {}, () => room);
    hub.offer('files', sample());
    hub.offer('files', batch([entry(5, 'm1', 'also lost')]));
    room = true;
    hub.offer('files', batch([entry(6, 'm1', 'got it')]));
    expect(slow.events.map((e) => e.dropped)).toEqual([5]);
    expect(slow.lines().map((l) => l.log)).toEqual(['got it']);
    expect(await slow.end()).toEqual({ dropped: 5 });
  });

  it('never throw into the delivery: a batch it cannot show counts as lost', async () => {
    const hub = new TapHub();
    const t = tap(hub, {});
    const broken: SinkBatch = {
      id: 'x',
      firstSeq: 1,
      lastSeq: 3,
      count: 3,
      get entries(): SinkEntry[] {
        throw new Error('cannot build');
      },
    };
    expect(() => hub.offer('files', broken)).not.toThrow();
    expect(await t.end()).toEqual({ dropped: 3 });
  });

  it('refuse a filter that is not one, naming the field', async () => {
    const hub = new TapHub();
    await expect(hub.serve({ level: 'loud' }, () => true, new AbortController().signal)).rejects.toThrow(/tap refused: level: /);
    await expect(hub.serve({ colour: 'red' }, () => true, new AbortController().signal)).rejects.toThrow(/tap refused: .*colour/);
  });
});
