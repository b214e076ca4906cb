// A sink that fails on every batch does not log a line per attempt: the delivery loop says
// each kind of failure at most once per 30 s per sink (one error line, one warning), with
// the count of the lines it held back (those go to debug). The loop's clock is frozen here
// and stepped by hand, so the 30 s are exact whatever the machine's load.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { pino } from 'pino';
import { SinkDelivery } from '../../src/delivery/sink-delivery.js';
import type { Sink, SendOutcome } from '../../src/sinks/contract.js';
import { Metrics } from '../../src/telemetry/metrics.js';
import { TestJournal, tempDir, testSettings, waitUntil } from '../helpers/delivery.js';

interface LogRecord {
  level: number;
  msg: string;
  sink?: string;
  suppressed?: number;
  attempts?: number;
}
const WARN = 40;
const ERROR = 50;
const DEBUG = 20;

let tmp: ReturnType<typeof tempDir>;
let journal: TestJournal;
let delivery: SinkDelivery | undefined;
beforeEach(() => {
  tmp = tempDir('mls-failure-log-');
  journal = new TestJournal(join(tmp.dir, 'state.db'));
});
afterEach(async () => {
  await delivery?.stop();
  delivery = undefined;
  journal.close();
  tmp.remove();
});

/** Runs a delivery loop of sink `hook` whose every send ends as `answer` says, on a clock the test steps. */
function run(answer: () => SendOutcome | Promise<SendOutcome>) {
  // Ahead of every entry's fetch time, so that batches go out at once; it moves only when stepped.
  let nowMs = Date.now() + 60_000;
  let sends = 0;
  const sink: Sink = {
    healthcheck: async () => ({ ok: true }),
    async send(): Promise<SendOutcome> {
      sends++;
      return answer();
    },
    flush: async () => {},
    close: async () => {},
  };
  const records: LogRecord[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void records.push(JSON.parse(line) as LogRecord) });
  journal.sink('hook');
  delivery = new SinkDelivery({
    name: 'hook',
    sink,
    store: journal.store,
    metrics: new Metrics({ processMetrics: false }),
    logger,
    now: () => nowMs,
    settings: testSettings({ maxEntries: 5, retryBaseMs: 5, retryMaxMs: 20 }),
  });
  void delivery.start();
  return {
    sends: () => sends,
    step: (ms: number) => (nowMs += ms),
    lines: (msg: string, level?: number) => records.filter((r) => r.msg === msg && (level === undefined || r.level === level)),
    all: records,
  };
}

describe('the delivery loop of a sink failing on every batch', () => {
  it('warns of retries once per 30 s, with the count of the retries held back', { timeout: 30_000 }, async () => {
    const r = run(() => ({ status: 'retry', error: 'receiver answered 503' }));
    journal.append('m1', 5);
    delivery!.notify();
    await waitUntil(() => r.sends() >= 8, '8 attempts');
    const said = () => r.lines('sink send failed; retrying', WARN);
    expect(said()).toHaveLength(1);
    expect(said()[0]).toMatchObject({ sink: 'hook', attempts: 1, suppressed: 0 });

    r.step(29_999);
    const before = r.sends();
    await waitUntil(() => r.sends() >= before + 3, '3 more attempts');
    expect(said()).toHaveLength(1);

    r.step(1);
    await waitUntil(() => said().length === 2, 'the next warning');
    const second = said()[1]!;
    // Every attempt between the two warnings was held back, and counted (the one after the step is said).
    expect(second.suppressed).toBe(r.all.slice(0, r.all.indexOf(second)).filter((l) => l.msg === 'sink send failed; retrying' && l.level === DEBUG).length);
    expect(second.attempts).toBeGreaterThan(8);
    console.log(`retries: ${second.attempts} failed sends, 2 warnings (the second with suppressed ${second.suppressed})`);
  });

  it('logs one error line per 30 s for batches it rejects, each dead-lettered all the same', { timeout: 30_000 }, async () => {
    const r = run(() => ({ status: 'reject', error: 'receiver answered 400' }));
    journal.append('m1', 30);
    delivery!.notify();
    await waitUntil(() => (journal.store.deadLetterCounts().get('hook')?.entries ?? 0) === 30, 'all 30 entries dead-lettered');
    const said = () => r.lines("sink rejected a batch; moved to the dead-letter table (see 'mls dlq list')", ERROR);
    expect(said()).toHaveLength(1);
    expect(said()[0]).toMatchObject({ sink: 'hook', suppressed: 0, entries: 5 });
    expect(r.lines("sink rejected a batch; moved to the dead-letter table (see 'mls dlq list')", DEBUG)).toHaveLength(5);

    r.step(30_000);
    journal.append('m1', 5);
    delivery!.notify();
    await waitUntil(() => said().length === 2, 'the next error line');
    expect(said()[1]).toMatchObject({ suppressed: 5 });
    console.log('rejections: 7 batches dead-lettered, 2 error lines (the second with suppressed 5)');
  });

  it('says a fault of the sink once per 30 s, and not again as a retry', { timeout: 30_000 }, async () => {
    const r = run(() => {
      throw new Error('the plugin has a bug');
    });
    journal.append('m1', 5);
    delivery!.notify();
    await waitUntil(() => r.sends() >= 8, '8 attempts');
    const errors = r.all.filter((l) => l.level >= WARN);
    expect(errors, JSON.stringify(errors)).toHaveLength(1);
    expect(errors[0]).toMatchObject({ level: ERROR, sink: 'hook', msg: 'sink fault; delivery goes on (see lastError in /status)', suppressed: 0 });

    r.step(30_000);
    const before = r.sends();
    await waitUntil(() => r.sends() >= before + 2, 'more attempts');
    const said = r.all.filter((l) => l.level >= WARN);
    expect(said).toHaveLength(2);
    expect(said[1]!.suppressed).toBeGreaterThanOrEqual(7);
    console.log(`faults: ${r.sends()} sends that threw, ${said.length} error lines (the second with suppressed ${said[1]!.suppressed}), no retry warning`);
  });
});
