// Exceptions as data, through the whole daemon: python3 raises and prints tracebacks of every
// shape, a service on 127.0.0.1 serves them one line per entry (as container logs do) for one
// model and as one multi-line entry each for another, and the daemon, with its default
// processing, ships each traceback's exception in the file and webhook records (`exception`)
// and as OTLP `exception.*` attributes; a raw sink gets the entries unchanged; and
// `mls_model_exceptions_total` counts each record once, whatever the sinks, bounded per model.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { entryAt, type WireEntry } from '../helpers/hostile-service.js';
import { deliveredAll, quickService, startScene, type Scene } from '../helpers/scene.js';
import { pythonTracebacks, type PythonTraceback } from '../helpers/python-tracebacks.js';
import { adminAddress, readNdjsonTree, readState, startMls, waitFor, writeConfig, type MlsProcess } from './harness.js';

const TOKEN = 'tok-exceptions-7d1c';
const T0 = Date.now() - 20_000;
const MAX_TYPES = 5;
const HEADING = 'ERROR:app.handlers:request 5bec6593 failed';
const printed = pythonTracebacks();

/** One line per entry: a heading before every other traceback, an access line after each. */
function perLine(): WireEntry[] {
  const logs = printed.flatMap((t, i) => [...(i % 2 === 0 ? [HEADING] : []), ...t.text.split('\n'), 'INFO:     10.0.0.7:52344 - "POST /predict HTTP/1.1" 500 Internal Server Error']);
  return logs.map((log, i) => entryAt(T0 + i, log, 'stderr'));
}

/** Each traceback as one entry of several lines, as a runtime that does not split lines sends it. */
function whole(): WireEntry[] {
  return printed.flatMap((t, i) => [entryAt(T0 + 3 * i, t.text, 'stderr'), entryAt(T0 + 3 * i + 1, 'INFO: next request', 'stdout')]);
}

const ENTRIES: Record<string, WireEntry[]> = { 'py-lines': perLine(), 'py-whole': whole() };

/** How many of a traceback's last lines go on a message in unindented lines: one line per entry, they are records of their own. */
const CUT: Record<string, { message: string; lines: number }> = {
  multi_line_message: { message: 'first line\n  indented second line', lines: 1 },
  with_note: { message: "'input_ids'", lines: 1 },
};

/** What each traceback's record must say, and its text (the stack stays the record's text). */
function expected(t: PythonTraceback, i: number, lines: boolean): { exception: { type: string; message?: string; chain?: string[] }; log: string } {
  const cut = lines ? CUT[t.name] : undefined;
  const message = cut?.message ?? t.message;
  const text = t.text.split('\n');
  return {
    exception: { type: t.type, ...(message !== undefined ? { message } : {}), ...(t.chain ? { chain: t.chain } : {}) },
    log: [...(lines && i % 2 === 0 ? [HEADING] : []), ...text.slice(0, text.length - (cut?.lines ?? 0))].join('\n'),
  };
}

let scene: Scene;
beforeAll(async () => {
  scene = await startScene('mls-exceptions-', ENTRIES);
});
afterAll(() => scene?.close());

type Shipped = { model_id: string; stream: string; log: string; level?: string; exception?: { type: string; message?: string; chain?: string[] } };

describe('exceptions from CPython tracebacks', () => {
  it('reach the file, webhook and OTLP records with their type, message and chain, and are counted once per record', { timeout: 120_000 }, async () => {
    expect(printed.length).toBeGreaterThan(15);
    const statePath = join(scene.dir, 'state', 'state.db');
    const batch = { max_entries: 50, max_delay: '50ms' };
    const config = writeConfig(scene.dir, {
      ...quickService(scene.service.url, statePath),
      models: [{ id: 'py-lines' }, { id: 'py-whole' }],
      processing: { exceptions: { max_types_per_model: MAX_TYPES } },
      sinks: [
        { name: 'records', type: 'file', path: join(scene.dir, 'records', '{model_id}.ndjson'), batch },
        { name: 'lines', type: 'file', raw: true, path: join(scene.dir, 'lines', '{model_id}.ndjson'), batch },
        { name: 'hook', type: 'webhook', url: scene.hook.url, batch },
        { name: 'otel', type: 'otlp', endpoint: scene.otlp.endpoint, protocol: 'http/protobuf', batch },
      ],
      admin: { listen: '127.0.0.1:0' },
      shutdown_timeout: '10s',
    });
    const total = ENTRIES['py-lines']!.length + ENTRIES['py-whole']!.length;
    const delivered = deliveredAll(statePath, total);
    const daemon: MlsProcess = startMls(['run', '--config', config], { MLS_API_TOKEN: TOKEN });
    let metrics = '';
    try {
      const admin = await adminAddress(daemon);
      await waitFor(delivered, 60_000, 'every sink to deliver every line', 200, () => `${JSON.stringify(readState(statePath))}\n${daemon.stderr().slice(-3000)}`);
      metrics = await (await fetch(`http://${admin}/metrics`)).text();
    } finally {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }

    const records = readNdjsonTree(join(scene.dir, 'records')) as Shipped[];
    const ofModel = (all: readonly Shipped[], model: string) => all.filter((r) => r.model_id === model && r.exception !== undefined);
    for (const [model, lines] of [['py-lines', true], ['py-whole', false]] as const) {
      const want = printed.map((t, i) => expected(t, i, lines));
      for (const [sink, got] of [['records', records], ['hook', scene.hook.uniqueEntries() as Shipped[]]] as const) {
        const withException = ofModel(got, model);
        expect(withException.map((r) => ({ exception: r.exception, log: r.log })), `${sink} ${model}`).toEqual(want);
        expect(new Set(withException.map((r) => r.level)), `${sink} ${model}`).toEqual(new Set(['error']));
      }
    }
    // A raw sink ships the entries as the service sent them, with no field added.
    const raw = readNdjsonTree(join(scene.dir, 'lines'));
    expect(raw).toHaveLength(total);
    expect(raw.every((r) => Object.keys(r).join() === 'model_id,time,stream,log')).toBe(true);

    // OTLP: the semantic conventions' attributes, the stack trace being the record's text.
    const otel = scene.otlp.logRecords().filter((r) => r.attributes['exception.type'] !== undefined);
    const fileRecords = [...ofModel(records, 'py-lines'), ...ofModel(records, 'py-whole')];
    const asOtlp = (r: Shipped) => ({
      model: r.model_id,
      type: r.exception!.type,
      message: r.exception!.message,
      stacktrace: r.log,
      chain: r.exception!.chain,
    });
    const received = otel.map((r) => ({
      model: r.attributes['mls.model_id'],
      type: r.attributes['exception.type'],
      message: r.attributes['exception.message'],
      stacktrace: r.attributes['exception.stacktrace'],
      chain: r.attributes['exception.chain'],
    }));
    const key = (x: { model: unknown; stacktrace: unknown }) => `${String(x.model)} ${String(x.stacktrace)}`;
    expect(received.sort((a, b) => key(a).localeCompare(key(b)))).toEqual(fileRecords.map(asOtlp).sort((a, b) => key(a).localeCompare(key(b))));
    expect(otel.every((r) => r.body === r.attributes['exception.stacktrace'] && r.severityText === 'ERROR')).toBe(true);

    // The metric: each record once (three sinks process them), the first MAX_TYPES types of a model, the rest as other.
    const series = new Map<string, number>();
    for (const m of metrics.matchAll(/^mls_model_exceptions_total\{model="([^"]+)",type="([^"]+)"\} (\d+)$/gm)) series.set(`${m[1]} ${m[2]}`, Number(m[3]));
    const want = new Map<string, number>();
    for (const model of ['py-lines', 'py-whole']) {
      const seen: string[] = [];
      for (const t of printed) {
        if (!seen.includes(t.type)) seen.push(t.type);
        const label = seen.indexOf(t.type) < MAX_TYPES ? t.type : 'other';
        want.set(`${model} ${label}`, (want.get(`${model} ${label}`) ?? 0) + 1);
      }
    }
    expect(series).toEqual(want);
  });
});
