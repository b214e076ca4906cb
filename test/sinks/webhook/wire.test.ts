//! The webhook sink's wire format: body formats, compression, headers, the signature,
//! and the Idempotency-Key across retries of one batch.
import { createHmac } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entryToNdjson, ndjsonBytes } from '../../../src/records/ndjson.js';
import type { SinkEntry } from '../../../src/sinks/contract.js';
import { createWebhookSink } from '../../../src/sinks/webhook/index.js';
import { renderBody } from '../../../src/sinks/webhook/wire.js';
import { withNdjson } from '../file/helpers.js';
import fc from 'fast-check';
import { TestJournal, startDelivery, tempDir, testSettings, waitUntil, contextFor } from '../../helpers/delivery.js';
import { startWebhookReceiver, verifySignature, type WebhookReceiver } from '../../helpers/receivers.js';
import { batch, captureContext, entry, never, webhookConfig } from './helpers.js';
import { runs } from '../../helpers/long.js';

let receiver: WebhookReceiver;
afterEach(async () => {
  await receiver?.close();
});

describe('webhook sink wire format', () => {
  beforeEach(async () => {
    receiver = await startWebhookReceiver();
  });

  it('POSTs NDJSON: one object per line with model_id, time (unchanged), stream and log', async () => {
    const sink = createWebhookSink(webhookConfig(receiver.url), captureContext().ctx);
    const b = batch(1, 3);
    b.entries[1] = entry(2, { log: 'multi\nline "quoted" ✓', time: '2026-11-22T10:00:00.1Z' });
    expect(await sink.send(b, never)).toEqual({ status: 'ok' });
    await sink.close();
    const [req] = receiver.requests;
    expect(req!.method).toBe('POST');
    expect(req!.path).toBe('/hook');
    expect(req!.headers['content-type']).toBe('application/x-ndjson');
    expect(req!.headers['content-encoding']).toBeUndefined();
    expect(req!.text).toBe(b.entries.map(entryToNdjson).join(''));
    expect(req!.entries).toEqual(b.entries.map((e) => ({ model_id: e.modelId, time: e.time, stream: e.stream, log: e.log })));
    expect(req!.entries[1]!.time).toBe('2026-11-22T10:00:00.1Z');
  });

  it('POSTs a JSON array with format json', async () => {
    const sink = createWebhookSink(webhookConfig(receiver.url, { format: 'json' }), captureContext().ctx);
    const b = batch(1, 4);
    expect(await sink.send(b, never)).toEqual({ status: 'ok' });
    await sink.close();
    const [req] = receiver.requests;
    expect(req!.headers['content-type']).toBe('application/json');
    const parsed = JSON.parse(req!.text) as unknown;
    expect(parsed).toEqual(b.entries.map((e) => ({ model_id: e.modelId, time: e.time, stream: e.stream, log: e.log })));
  });

  it('gzips the body with compression gzip and says so in Content-Encoding', async () => {
    const sink = createWebhookSink(webhookConfig(receiver.url, { compression: 'gzip' }), captureContext().ctx);
    const b = batch(1, 50);
    expect(await sink.send(b, never)).toEqual({ status: 'ok' });
    await sink.close();
    const [req] = receiver.requests;
    expect(req!.headers['content-encoding']).toBe('gzip');
    expect(req!.raw.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect(gunzipSync(req!.raw).toString('utf8')).toBe(b.entries.map(entryToNdjson).join(''));
    expect(Number(req!.headers['content-length'])).toBe(req!.raw.length);
  });

  it('sends the configured headers, but never lets them replace Idempotency-Key or the framing', async () => {
    const headers = { Authorization: 'Bearer abcd-1234', 'X-Tenant': 'team-a', 'Idempotency-Key': 'mine', 'Content-Encoding': 'br' };
    const { ctx, logs } = captureContext();
    const sink = createWebhookSink(webhookConfig(receiver.url, { headers }), ctx);
    expect(await sink.send(batch(1, 2, 'batch-1-2'), never)).toEqual({ status: 'ok' });
    await sink.close();
    const [req] = receiver.requests;
    expect(req!.headers.authorization).toBe('Bearer abcd-1234');
    expect(req!.headers['x-tenant']).toBe('team-a');
    expect(req!.headers['idempotency-key']).toBe('batch-1-2');
    expect(req!.headers['content-encoding']).toBeUndefined();
    expect(logs.filter((l) => l.level === 'warn')).toHaveLength(2);
  });

  it('keeps the query string of the URL', async () => {
    const sink = createWebhookSink(webhookConfig(`${receiver.url}?tenant=a&x=1`), captureContext().ctx);
    await sink.send(batch(1, 1), never);
    await sink.close();
    expect(receiver.requests[0]!.path).toBe('/hook?tenant=a&x=1');
  });

  it('signs the bytes as sent (after gzip) so the documented check verifies, and a changed body does not', async () => {
    await receiver.close();
    const secret = 'whsec-0123456789';
    receiver = await startWebhookReceiver({ secret });
    const nowMs = Date.parse('2026-11-22T10:00:00Z');
    const sink = createWebhookSink(webhookConfig(receiver.url, { signing_secret: secret, compression: 'gzip' }), captureContext('hook', () => nowMs).ctx);
    // The receiver checks freshness against its own clock; this one is fixed, so check by hand.
    await sink.send(batch(1, 5), never);
    await sink.close();
    const req = receiver.requests[0]!;
    const header = req.headers['x-mls-signature'] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const t = nowMs / 1000;
    expect(header.startsWith(`t=${t},`)).toBe(true);
    // The algorithm a receiver implements: HMAC-SHA256(secret, "<t>.<raw body>"), hex.
    const expected = createHmac('sha256', secret).update(Buffer.concat([Buffer.from(`${t}.`), req.raw])).digest('hex');
    expect(header).toBe(`t=${t},v1=${expected}`);
    expect(verifySignature(secret, req.raw, header, t)).toBe(true);
    expect(verifySignature(secret, gunzipSync(req.raw), header, t)).toBe(false);
    expect(verifySignature('another-secret', req.raw, header, t)).toBe(false);
    expect(verifySignature(secret, req.raw, header, t + 3600)).toBe(false);
  });

  it('passes a receiver that verifies signatures with the current time', async () => {
    await receiver.close();
    receiver = await startWebhookReceiver({ secret: 'whsec-live' });
    const sink = createWebhookSink(webhookConfig(receiver.url, { signing_secret: 'whsec-live', format: 'json' }), captureContext().ctx);
    expect(await sink.send(batch(1, 3), never)).toEqual({ status: 'ok' });
    await sink.close();
    expect(receiver.requests[0]!.signatureValid).toBe(true);
    expect(receiver.uniqueEntries()).toHaveLength(3);
  });

  it('sends no signature header without a signing secret', async () => {
    const sink = createWebhookSink(webhookConfig(receiver.url), captureContext().ctx);
    await sink.send(batch(1, 1), never);
    await sink.close();
    expect(receiver.requests[0]!.headers['x-mls-signature']).toBeUndefined();
  });
});

describe('webhook sink Idempotency-Key through the delivery loop', () => {
  let tmp: ReturnType<typeof tempDir>;
  let journal: TestJournal;
  beforeEach(async () => {
    receiver = await startWebhookReceiver();
    tmp = tempDir();
    journal = new TestJournal(`${tmp.dir}/state.db`);
  });
  afterEach(() => {
    journal.close();
    tmp.remove();
  });

  it('carries the same key on every retry of a batch, and a different key on the next batch', async () => {
    journal.sink('hook');
    const sink = createWebhookSink(webhookConfig(receiver.url), contextFor(journal, 'hook'));
    receiver.failNext(503, 3);
    const logs = journal.append('m1', 10);
    const delivery = startDelivery(journal, 'hook', sink, testSettings({ maxEntries: 10 }));
    await waitUntil(() => journal.sink('hook').cursor === 10, 'the first batch is acknowledged');
    journal.append('m1', 5);
    delivery.notify();
    await waitUntil(() => journal.sink('hook').cursor === 15, 'the second batch is acknowledged');
    await delivery.stop();
    await sink.close();

    const keys = receiver.requests.map((r) => r.idempotencyKey);
    expect(receiver.requests.map((r) => r.status)).toEqual([503, 503, 503, 200, 200]);
    expect(new Set(keys.slice(0, 4)).size).toBe(1);
    expect(keys[4]).not.toBe(keys[0]);
    expect(keys[0]).toMatch(/^[0-9a-f]{32}$/);
    expect(receiver.uniqueEntries().map((e) => e.log).slice(0, 10)).toEqual(logs);
  });
});

describe('webhook body from the journal lines', () => {
  it('is byte for byte the body rendered from entries, in both formats', () => {
    const entryArb = fc.record({ model: fc.constantFrom('m1', 'm"2', 'a/b'), log: fc.string({ unit: 'binary', maxLength: 30 }), stream: fc.constantFrom('stdout', 'stderr') });
    // the bodies as rendered entry by entry
    const fromEntries = (entries: SinkEntry[], format: 'ndjson' | 'json'): string =>
      format === 'ndjson' ? entries.map(entryToNdjson).join('') : `[${entries.map((e) => entryToNdjson(e).slice(0, -1)).join(',')}]`;
    fc.assert(
      fc.property(fc.array(entryArb, { maxLength: 12 }), fc.constantFrom('ndjson' as const, 'json' as const), (rows, format) => {
        const entries = rows.map((r, i) => entry(i + 1, { modelId: r.model, log: r.log, stream: r.stream }));
        const fromLines = renderBody(ndjsonBytes(withNdjson(entries).ndjson!), format);
        expect(fromLines.toString('utf8')).toBe(fromEntries(entries, format));
        expect(fromLines.equals(Buffer.from(fromEntries(entries, format), 'utf8'))).toBe(true);
        if (format === 'json') expect(JSON.parse(fromLines.toString('utf8'))).toHaveLength(entries.length);
      }),
      { numRuns: runs(1_000), seed: 21 },
    );
    expect(renderBody(Buffer.alloc(0), 'json').toString()).toBe('[]');
  });
});
