// Lines that once stopped delivery for good reach every sink type: a JSON line nested 10,000
// deep, a 6 MB token under the `secrets` preset, a line on which a backtracking level rule
// runs for hours, lone surrogates (one in a JSON line with an infinite number). Each is
// shipped once (as plain text where it cannot be structured), the lines after it and the
// other model's lines go on, and a SIGKILL and restart (the journal read again) change
// nothing. Every output is decoded before it is searched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileRedactions } from '../../src/processing/redact.js';
import { entryAt, type WireEntry } from '../helpers/hostile-service.js';
import { deliveredAll, quickService, startScene, type Scene } from '../helpers/scene.js';
import { writeHostileSink } from '../helpers/hostile-sink.js';
import { compareMultisets, readNdjsonTree, readState, startMls, waitFor, writeConfig, type MlsProcess } from './harness.js';

const TOKEN = 'tok-hostile-lines-51ab';
const T0 = Date.now() - 20_000;
const DEEP = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
const TOKEN_RUN = 'token sk-' + 'Ab3Xy9Qz'.repeat(786_432);
const BACKTRACKS = 'a'.repeat(48) + '!';
const HALF_EMOJI = 'emoji cut in half: \ud83d';
const UNENCODABLE = '{"event": "half an emoji \ud83d", "ratio": 1e400, "level": "warning"}';
const HOSTILE = [DEEP, TOKEN_RUN, BACKTRACKS, HALF_EMOJI, UNENCODABLE];

const ENTRIES: Record<string, WireEntry[]> = {
  hostile: [
    'INFO: before',
    ...HOSTILE.flatMap((h, i) => [h, `INFO: after hostile line ${i}`]),
  ].map((log, i) => entryAt(T0 + i * 50, log)),
  calm: Array.from({ length: 30 }, (_, i) => entryAt(T0 + i * 40, `INFO: calm ${i}`)),
};

let scene: Scene;
beforeAll(async () => {
  scene = await startScene('mls-hostile-', ENTRIES);
});
afterAll(() => scene?.close());

type Shipped = { model_id: string; stream: string; log: string; lines?: number; attributes?: unknown; message?: string };

/** Each line of each record, keyed by model, stream and text. */
function lineKeys(records: readonly Shipped[]): string[] {
  return records.flatMap((r) => r.log.split('\n').map((l) => JSON.stringify([r.model_id, r.stream, l])));
}

describe('hostile lines', () => {
  it('reach every sink type once, and stop neither the batch, the model, nor the other model, across a restart', { timeout: 120_000 }, async () => {
    const statePath = join(scene.dir, 'state', 'state.db');
    const moduleOut = join(scene.dir, 'module.ndjson');
    const batch = { max_entries: 4, max_delay: '50ms' };
    const config = writeConfig(scene.dir, {
      ...quickService(scene.service.url, statePath),
      models: [{ id: 'hostile' }, { id: 'calm' }],
      processing: { redact: { secrets: true }, levels: { rules: [{ match: '^(a+)+$', level: 'fatal' }] } },
      sinks: [
        { name: 'records', type: 'file', path: join(scene.dir, 'records', '{model_id}.ndjson'), batch },
        { name: 'lines', type: 'file', raw: true, path: join(scene.dir, 'lines', '{model_id}.ndjson'), batch },
        { name: 'out', type: 'stdout', batch },
        { name: 'hook', type: 'webhook', url: scene.hook.url, batch },
        { name: 'otel', type: 'otlp', endpoint: scene.otlp.endpoint, protocol: 'http/protobuf', batch },
        { name: 'plugin', type: 'module', path: writeHostileSink(scene.dir), options: { mode: 'throw', badCalls: 0, out: moduleOut }, batch },
      ],
      shutdown_timeout: '10s',
      log: { level: 'warn' },
    });
    const env = { MLS_API_TOKEN: TOKEN };
    const delivered = deliveredAll(statePath, ENTRIES.hostile!.length + ENTRIES.calm!.length);
    // Killed once some lines are in, then started again: what was in flight is read again.
    const first = startMls(['run', '--config', config], env);
    await waitFor(() => (readState(statePath)?.lastSeq ?? 0) > 0, 30_000, 'the first lines in the journal');
    first.child.kill('SIGKILL');
    await first.exited;
    const daemon: MlsProcess = startMls(['run', '--config', config], env);
    try {
      await waitFor(delivered, 60_000, 'every sink to deliver every line', 200, () => `${JSON.stringify(readState(statePath))}\n${daemon.stderr().slice(-3000)}`);
    } finally {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }
    expect(daemon.stderr()).not.toContain('sink fault');

    // What each line becomes: redacted as text; the 6 MB token's secret gone.
    const redact = compileRedactions([], { secretsPreset: true });
    const truth = Object.entries(ENTRIES).flatMap(([model, entries]) => entries.map((e) => ({ model_id: model, stream: e.stream, log: redact(e.log) })));
    expect(truth.some((t) => t.log === 'token [REDACTED]')).toBe(true);
    const expected = lineKeys(truth);

    const records = readNdjsonTree(join(scene.dir, 'records')) as Shipped[];
    const stdout = (first.stdout() + daemon.stdout()).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Shipped);
    const shipped: Record<string, Shipped[]> = {
      records,
      lines: readNdjsonTree(join(scene.dir, 'lines')),
      out: stdout,
      hook: scene.hook.entries() as Shipped[],
      plugin: readFileSync(moduleOut, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Shipped),
    };
    for (const [sink, got] of Object.entries(shipped)) {
      // stdout and the module are at least once across the SIGKILL; the rest exactly once.
      const figures = compareMultisets(expected, lineKeys(got));
      expect(figures, sink).toMatchObject({ lost: 0, unexpected: 0, ...(sink === 'out' || sink === 'plugin' || sink === 'hook' ? {} : { duplicated: 0 }) });
    }
    // The deep line is text, not structure; the JSON line a sink could not encode as it came is structured.
    const deep = records.find((r) => r.log === DEEP)!;
    expect(deep.attributes).toBeUndefined();
    const unencodable = records.find((r) => r.log === UNENCODABLE)!;
    expect(unencodable).toMatchObject({ message: 'half an emoji \ud83d', attributes: { ratio: null } });

    // OTLP: one log record per processed record; strings well-formed UTF-8; the infinite number as text.
    const otel = scene.otlp.logRecords();
    const bodies = otel.map((r) => r.body);
    expect(new Set(bodies)).toEqual(new Set(records.map((r) => (r.message ?? r.log).toWellFormed())));
    expect(bodies.every((b) => b.isWellFormed())).toBe(true);
    expect(otel.find((r) => r.body === 'half an emoji \ufffd')?.attributes.ratio).toBe('Infinity');
    expect(otel.find((r) => r.body === HALF_EMOJI.toWellFormed())).toBeDefined();
  });
});
