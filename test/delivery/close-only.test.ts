// A batch that only closes groups (the model's checkpoint passed a held line by the maximum
// gap, and no new line came) covers no seq: it starts where the next batch will. With several
// batches in flight it still settles alone before the next batch is built, so that the
// in-flight table (one row per first seq) keeps its row; and a batch rebuilt after a crash,
// whichever one was in flight, holds the records it was first sent with under the same key.
// The sink's sends are held open and answered by the test: no step depends on timing.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SinkDelivery } from '../../src/delivery/sink-delivery.js';
import type { ModelProgress } from '../../src/delivery/processing/stage.js';
import type { InflightBatch } from '../../src/journal/store.js';
import type { SendOutcome, Sink, SinkBatch } from '../../src/sinks/contract.js';
import { Metrics } from '../../src/telemetry/metrics.js';
import { TestJournal, silentLogger, tempDir, testSettings, waitUntil } from '../helpers/delivery.js';

const SINK = 'hook';
const MODEL = 'm';
const MS = 1_000_000n;

// The first page (seqs 1 and 2, at 0 and 1 ms after the journal's base time), then the next (seq 3, at 3 s).
const STARTED = 'INFO:     Started server process [12]';
/** A logging line that may head a traceback: held open until its stream's next line, or until the checkpoint passes it by the gap. */
const HELD = 'ERROR:app:lost a worker';
const HELD_NS = BigInt(Date.parse('2026-11-22T10:00:00Z')) * MS + 1n * MS;
const NEXT = 'INFO:     127.0.0.1:5000 - "POST /predict HTTP/1.1" 200 OK';
const NEXT_AT_MS = 3_000;
/** The default `multiline.max_gap`. */
const MAX_GAP_NS = 2_000n * MS;

/** One call of the test sink's `send`, answered when the test says. */
interface Sent {
  batch: SinkBatch;
  /** The batch's NDJSON lines as the sink got them (what a webhook body holds). */
  lines: string[];
  settled: boolean;
  /** How it was answered: `ok` by the test, `retry` when the loop stopped. */
  outcome: SendOutcome['status'] | undefined;
  settle(outcome: SendOutcome): void;
}

/**
 * A sink whose sends stay open until the test answers them. At every send it checks that no
 * two open sends start at the same seq, and that the state file holds an in-flight row, with
 * the batch's range and key, for every open send (what a crash would rebuild).
 */
class HeldSink implements Sink {
  readonly sent: Sent[] = [];
  readonly violations: string[] = [];
  /** Called with each batch as it reaches the sink, before it is answered. */
  onSend: ((batch: SinkBatch) => void) | undefined;
  #taken = 0;
  #arrived: (() => void) | undefined;

  constructor(private readonly inflightRows: () => InflightBatch[]) {}

  healthcheck(): Promise<{ ok: boolean }> {
    return Promise.resolve({ ok: true });
  }

  send(batch: SinkBatch, signal: AbortSignal): Promise<SendOutcome> {
    let resolve!: (outcome: SendOutcome) => void;
    const answer = new Promise<SendOutcome>((r) => (resolve = r));
    const sent: Sent = {
      batch,
      lines: Buffer.concat(batch.ndjson!.map((c) => c.bytes)).toString().split('\n').slice(0, -1),
      settled: false,
      outcome: undefined,
      settle: (outcome) => {
        if (sent.settled) return;
        sent.settled = true;
        sent.outcome = outcome.status;
        resolve(outcome);
      },
    };
    signal.addEventListener('abort', () => sent.settle({ status: 'retry', error: 'stopped' }), { once: true });
    for (const other of this.open()) {
      if (other.batch.firstSeq === batch.firstSeq) this.violations.push(`${label(batch)} sent while ${label(other.batch)}, at the same first seq, is in flight`);
    }
    this.sent.push(sent);
    const rows = this.inflightRows();
    const firstSeqs = rows.map((r) => r.firstSeq);
    if (new Set(firstSeqs).size !== firstSeqs.length) this.violations.push(`in-flight rows share a first seq: ${JSON.stringify(rows)}`);
    for (const s of this.open()) {
      const { id, firstSeq, lastSeq } = s.batch;
      if (!rows.some((r) => r.firstSeq === firstSeq && r.lastSeq === lastSeq && r.key === id)) {
        this.violations.push(`${label(s.batch)} in flight has no in-flight row of its own (rows: ${JSON.stringify(rows.map((r) => [r.firstSeq, r.lastSeq, r.key]))})`);
      }
    }
    this.onSend?.(batch);
    this.#arrived?.();
    return answer;
  }

  flush(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /** Sends not answered yet. */
  open(): Sent[] {
    return this.sent.filter((s) => !s.settled);
  }

  /** The next send not yet taken by the test (waiting for it to arrive). */
  async next(): Promise<Sent> {
    while (this.sent.length <= this.#taken) await new Promise<void>((r) => (this.#arrived = r));
    return this.sent[this.#taken++]!;
  }
}

function logOf(line: string): string {
  return (JSON.parse(line) as { log: string }).log;
}

function label(b: SinkBatch): string {
  return `batch [${b.firstSeq}, ${b.lastSeq}] ${b.id}`;
}

/** Lets the loop run whatever it does next without waiting for the sink (a few turns of the event loop). */
async function settleLoop(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

let tmp: ReturnType<typeof tempDir>;
let path: string;
let journal: TestJournal;
/** The model's checkpoint as the test moves it (undefined: no window completed yet). */
let watermarkNs: bigint | undefined;
const running: SinkDelivery[] = [];

beforeEach(() => {
  tmp = tempDir('mls-close-only-');
  path = join(tmp.dir, 'state.db');
  journal = new TestJournal(path);
  // The sink's row first: it starts at the journal's end, before the first page.
  journal.sink(SINK);
  watermarkNs = undefined;
});

afterEach(async () => {
  for (const d of running.splice(0)) await d.stop();
  journal.close();
  tmp.remove();
});

/** The checkpoint as the daemon gives it to the stage: the test's watermark, the journal's own seqs. */
const progress: ModelProgress = {
  watermarkNs: () => watermarkNs,
  journaledThrough: (model) => journal.store.journaledThrough(model),
  stopped: () => false,
};

/** A delivery loop with processing (the defaults: python tracebacks, max_gap 2s) and two batches in flight, on the current journal. */
function startHeld(): { delivery: SinkDelivery; sink: HeldSink } {
  const sink = new HeldSink(() => journal.store.getSink(SINK)!.inflightRanges);
  const delivery = new SinkDelivery({
    name: SINK,
    sink,
    store: journal.store,
    metrics: new Metrics({ processMetrics: false }),
    logger: silentLogger(),
    now: () => Date.now(),
    // No batching delay: a batch is built as soon as its lines are in the journal.
    settings: testSettings({ concurrency: 2, maxDelayMs: 0 }),
    processing: { processor: {}, raw: false, progress },
  });
  running.push(delivery);
  void delivery.start();
  delivery.notify();
  return { delivery, sink };
}

/** Stops the loop with its sends unanswered and opens the state file again, as a crashed daemon's next start does. */
async function crash(delivery: SinkDelivery): Promise<void> {
  running.splice(running.indexOf(delivery), 1);
  await delivery.stop();
  journal.close();
  journal = new TestJournal(path);
}

/**
 * Delivers the first page (its last line held open), then moves the checkpoint past the held
 * line by more than the gap: the loop builds a batch of the close only. Returns it as sent.
 */
async function closeOnlyInFlight(sink: HeldSink, delivery: SinkDelivery): Promise<Sent> {
  const first = await sink.next();
  expect([first.batch.firstSeq, first.batch.lastSeq]).toEqual([1, 2]);
  expect(first.lines.map(logOf)).toEqual([STARTED]);
  first.settle({ status: 'ok' });
  await waitUntil(() => journal.sink(SINK).cursor === 2, 'the first batch is acknowledged');
  expect(journal.sink(SINK).holdSeq).toBe(2);

  watermarkNs = HELD_NS + MAX_GAP_NS + 1n * MS;
  delivery.notify();
  const closeOnly = await sink.next();
  expect([closeOnly.batch.firstSeq, closeOnly.batch.lastSeq]).toEqual([3, 2]);
  expect(closeOnly.lines.map(logOf)).toEqual([HELD]);
  return closeOnly;
}

/** Records of the batches each id was sent under, first send first. */
function byId(...sinks: HeldSink[]): Map<string, string[][]> {
  const out = new Map<string, string[][]>();
  for (const s of sinks) for (const sent of s.sent) out.set(sent.batch.id, [...(out.get(sent.batch.id) ?? []), sent.lines]);
  return out;
}

/** The lines of the batches the sinks acknowledged, in the order they were sent. */
function acknowledged(...sinks: HeldSink[]): string[] {
  return sinks.flatMap((s) => s.sent.filter((x) => x.outcome === 'ok').flatMap((x) => x.lines.map(logOf)));
}

/** Answers every open send ok, as they come, until the cursor reaches `seq`. */
async function deliverThrough(sink: HeldSink, seq: number): Promise<void> {
  await waitUntil(() => {
    for (const s of sink.open()) s.settle({ status: 'ok' });
    return journal.sink(SINK).cursor === seq;
  }, `the cursor reaches ${seq}`);
}

describe('a batch of closes only, with batches in flight at once', () => {
  it('settles alone when a page comes in while it is at the sink; what a crash leaves in flight is rebuilt as it was sent', async () => {
    journal.appendLines(MODEL, [STARTED, HELD]);
    const { delivery, sink } = startHeld();
    // The next page reaches the journal while the close is at the sink.
    sink.onSend = (batch) => {
      if (batch.lastSeq < batch.firstSeq) journal.appendLines(MODEL, [NEXT], { atMs: NEXT_AT_MS });
    };
    const closeOnly = await closeOnlyInFlight(sink, delivery);
    expect(journal.store.lastSeq()).toBe(3);
    await settleLoop();
    expect(sink.violations).toEqual([]);
    expect(sink.open().map((s) => s.batch.id)).toEqual([closeOnly.batch.id]);
    expect(journal.sink(SINK).inflightRanges.map((r) => [r.firstSeq, r.lastSeq, r.key])).toEqual([[3, 2, closeOnly.batch.id]]);

    // A crash with the close unacknowledged: it is rebuilt first, the same records under the same key.
    await crash(delivery);
    const again = startHeld();
    const rebuilt = await again.sink.next();
    expect(rebuilt.batch.id).toBe(closeOnly.batch.id);
    expect(rebuilt.lines).toEqual(closeOnly.lines);
    await settleLoop();
    expect(again.sink.violations).toEqual([]);
    expect(again.sink.open()).toHaveLength(1);

    // Once it settled, the next batch starts at the same seq, under a key of its own.
    rebuilt.settle({ status: 'ok' });
    const next = await again.sink.next();
    expect([next.batch.firstSeq, next.batch.lastSeq]).toEqual([3, 3]);
    expect(next.batch.id).not.toBe(closeOnly.batch.id);
    expect(next.lines.map(logOf)).toEqual([NEXT]);
    expect(journal.sink(SINK).cursor).toBe(2);

    // Another crash with that one unacknowledged: rebuilt as it was sent, not with the close in it.
    await crash(again.delivery);
    const third = startHeld();
    const rebuiltNext = await third.sink.next();
    expect(rebuiltNext.batch.id).toBe(next.batch.id);
    expect(rebuiltNext.lines).toEqual(next.lines);
    await deliverThrough(third.sink, 3);
    expect(third.sink.violations).toEqual([]);
    for (const [id, sends] of byId(sink, again.sink, third.sink)) expect(sends, `the sends of ${id}`).toEqual(sends.map(() => sends[0]));
    expect(acknowledged(sink, again.sink, third.sink)).toEqual([STARTED, HELD, NEXT]);
  });

  it('settles alone when rebuilt after a crash with a later page in the journal, which a second crash rebuilds as it was sent', async () => {
    journal.appendLines(MODEL, [STARTED, HELD]);
    const first = startHeld();
    const closeOnly = await closeOnlyInFlight(first.sink, first.delivery);
    await settleLoop();
    expect(first.sink.violations).toEqual([]);

    // The daemon crashes with the close in flight; a page came meanwhile.
    await crash(first.delivery);
    journal.appendLines(MODEL, [NEXT], { atMs: NEXT_AT_MS });
    const second = startHeld();
    const rebuilt = await second.sink.next();
    expect(rebuilt.batch.id).toBe(closeOnly.batch.id);
    expect(rebuilt.lines).toEqual(closeOnly.lines);
    await settleLoop();
    expect(second.sink.violations).toEqual([]);
    expect(second.sink.open().map((s) => s.batch.id)).toEqual([closeOnly.batch.id]);
    expect(journal.sink(SINK).inflightRanges.map((r) => [r.firstSeq, r.lastSeq, r.key])).toEqual([[3, 2, closeOnly.batch.id]]);

    // It crashes again before the sink answers: the close is rebuilt once more, as it was sent.
    await crash(second.delivery);
    const third = startHeld();
    const again = await third.sink.next();
    expect(again.batch.id).toBe(closeOnly.batch.id);
    expect(again.lines).toEqual(closeOnly.lines);
    await deliverThrough(third.sink, 3);
    expect(third.sink.violations).toEqual([]);
    for (const [id, sends] of byId(first.sink, second.sink, third.sink)) expect(sends, `the sends of ${id}`).toEqual(sends.map(() => sends[0]));
    // Every line went out once among the batches acknowledged.
    expect(acknowledged(first.sink, second.sink, third.sink)).toEqual([STARTED, HELD, NEXT]);
  });
});
