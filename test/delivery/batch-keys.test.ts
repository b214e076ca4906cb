//! Batch ids (the webhook's Idempotency-Key) are unique per installation: each state file
//! has its own random id, which goes into every key. A key stays the same across retries
//! and restarts of one installation, and a batch left in flight by an older version is sent
//! again under the key that version gave it.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sinkSchema } from '../../src/cli/config.js';
import type { WebhookSinkConfig } from '../../src/sinks/webhook/config.js';
import type { SinkDelivery } from '../../src/delivery/sink-delivery.js';
import { StateStore } from '../../src/journal/store.js';
import { StateReader } from '../../src/journal/reader.js';
import type { Sink, SinkBatch } from '../../src/sinks/contract.js';
import { createWebhookSink } from '../../src/sinks/webhook/index.js';
import { TestJournal, contextFor, startDelivery, tempDir, testSettings, waitUntil } from '../helpers/delivery.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let tmp: ReturnType<typeof tempDir>;
let receiver: WebhookReceiver;
const journals: TestJournal[] = [];
const deliveries: SinkDelivery[] = [];
const sinks: Sink[] = [];

beforeEach(async () => {
  tmp = tempDir('mls-keys-');
  receiver = await startWebhookReceiver();
});

afterEach(async () => {
  for (const d of deliveries.splice(0)) await d.stop();
  for (const s of sinks.splice(0)) await s.close();
  for (const j of journals.splice(0)) j.close();
  await receiver.close();
  tmp.remove();
});

function journal(file: string): TestJournal {
  const j = new TestJournal(join(tmp.dir, file));
  journals.push(j);
  return j;
}

/** A webhook sink named `hook` posting to the receiver, driven by the real delivery loop. */
function shipToHook(j: TestJournal): SinkDelivery {
  const config = sinkSchema.parse({ name: 'hook', type: 'webhook', url: receiver.url, timeout: '2s' }) as WebhookSinkConfig;
  const sink = createWebhookSink(config, contextFor(j, 'hook'));
  sinks.push(sink);
  const d = startDelivery(j, 'hook', sink, testSettings({ retryBaseMs: 20, retryMaxMs: 100 }));
  deliveries.push(d);
  return d;
}

/** A sink that records the batches it is given and answers `retry` until `accept` is set. */
function recordingSink(): Sink & { batches: SinkBatch[]; accept: boolean } {
  const s = {
    batches: [] as SinkBatch[],
    accept: false,
    healthcheck: () => Promise.resolve({ ok: true }),
    send(batch: SinkBatch) {
      s.batches.push(batch);
      return Promise.resolve(s.accept ? { status: 'ok' as const } : { status: 'retry' as const, error: 'not yet' });
    },
    flush: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
  return s;
}

describe('installation id', () => {
  it('is made once per state file, kept across reopening, and differs between files', () => {
    const a = StateStore.open(join(tmp.dir, 'a.db'));
    const b = StateStore.open(join(tmp.dir, 'b.db'));
    const idA = a.installationId;
    expect(idA).toMatch(UUID);
    expect(b.installationId).toMatch(UUID);
    expect(b.installationId).not.toBe(idA);
    a.close();
    b.close();
    const again = StateStore.open(join(tmp.dir, 'a.db'));
    expect(again.installationId).toBe(idA);
    again.close();
    const readonly = StateReader.open(join(tmp.dir, 'a.db'));
    expect(readonly.installationId).toBe(idA);
    readonly.close();
  });
});

describe('Idempotency-Key', () => {
  it('differs between two installations whose webhook sinks share a name and send the same seq ranges', { timeout: 30_000 }, async () => {
    const one = journal('one.db');
    const two = journal('two.db');
    one.sink('hook');
    two.sink('hook');
    const logs = [...one.append('model-of-one', 20), ...two.append('model-of-two', 20)];
    shipToHook(one);
    shipToHook(two);
    await waitUntil(() => one.sink('hook').cursor === 20 && two.sink('hook').cursor === 20, 'both installations deliver everything');
    const keys = receiver.requests.map((r) => r.idempotencyKey);
    expect(keys.length).toBe(4); // two batches of 10 each
    expect(new Set(keys).size).toBe(keys.length);
    // A receiver that drops repeated keys still gets every entry of both installations.
    expect(receiver.uniqueEntries().map((e) => e.log).sort()).toEqual([...logs].sort());
  });

  it('stays the same for a batch retried, and re-sent after a restart', { timeout: 30_000 }, async () => {
    const path = 'restart.db';
    const j = journal(path);
    j.sink('hook');
    const logs = j.append('m1', 10);
    receiver.failNext(503, Infinity);
    const d = shipToHook(j);
    await waitUntil(() => receiver.requests.length >= 2, 'the batch is retried');
    const key = receiver.requests[0]!.idempotencyKey!;
    expect(receiver.requests.map((r) => r.idempotencyKey)).toEqual(receiver.requests.map(() => key));
    expect(j.sink('hook').inflight).toEqual({ firstSeq: 1, lastSeq: 10, key });
    await d.stop();
    deliveries.splice(deliveries.indexOf(d), 1);
    // The stopped process's sink is gone too: no request of it may reach the receiver later.
    await sinks.splice(0, 1)[0]!.close();
    j.close();
    journals.splice(journals.indexOf(j), 1);
    const before = receiver.requests.length;

    const reopened = journal(path);
    // New entries meanwhile: the batch in flight is rebuilt as it was, not merged with them.
    reopened.append('m2', 5);
    receiver.recover();
    shipToHook(reopened);
    await waitUntil(() => reopened.sink('hook').cursor === 15, 'delivery after the restart');
    const accepted = receiver.requests.slice(before).filter((r) => r.status === 200);
    expect(accepted[0]!.idempotencyKey).toBe(key);
    expect(accepted[0]!.entries.map((e) => e.log)).toEqual(logs);
    expect(accepted[1]!.idempotencyKey).not.toBe(key);
  });

  it('of a batch left in flight by a schema 4 state file is the key that version gave it', { timeout: 30_000 }, async () => {
    const path = join(tmp.dir, 'v4.db');
    const old = new TestJournal(path);
    old.sink('hook');
    const logs = old.append('m1', 8);
    old.store.setInflight('hook', 1, 8, 'ignored');
    old.close();
    // Back to what schema 4 left on disk: no installation id, no batch keys, no window tokens, no start_at.
    const db = new Database(path);
    db.exec("DELETE FROM meta WHERE key = 'installation_id'; ALTER TABLE inflight DROP COLUMN batch_key; ALTER TABLE checkpoints DROP COLUMN win_tokens; ALTER TABLE checkpoints DROP COLUMN start_at; ALTER TABLE sinks DROP COLUMN held; ALTER TABLE sinks DROP COLUMN hold_seq; ALTER TABLE inflight DROP COLUMN closes;");
    db.pragma('user_version = 4');
    db.close();

    const upgraded = StateStore.open(path);
    expect(upgraded.installationId).toMatch(UUID);
    expect(upgraded.getSink('hook')!.inflight).toEqual({ firstSeq: 1, lastSeq: 8, key: undefined });
    upgraded.close();
    const j = journal('v4.db');
    const sink = recordingSink();
    sinks.push(sink);
    const d = startDelivery(j, 'hook', sink, testSettings({ retryBaseMs: 20, retryMaxMs: 50 }));
    deliveries.push(d);
    await waitUntil(() => sink.batches.length >= 2, 'the batch in flight is sent again, and retried');
    // What schema 4 derived: sha256 of the sink name and the seq range, 32 hex digits.
    const v4Key = createHash('sha256').update('hook\u00001\u00008').digest('hex').slice(0, 32);
    expect(sink.batches.map((b) => b.id)).toEqual(sink.batches.map(() => v4Key));
    expect(sink.batches[0]!.entries.map((e) => e.log)).toEqual(logs);
    sink.accept = true;
    await waitUntil(() => j.sink('hook').cursor === 8, 'the batch is acknowledged');
    // Batches after the upgrade carry the installation's keys.
    j.append('m2', 3);
    d.notify();
    await waitUntil(() => j.sink('hook').cursor === 11, 'a batch recorded by this version');
    const later = sink.batches[sink.batches.length - 1]!;
    expect(later.id).not.toBe(v4Key);
    expect(later.id).toMatch(/^[0-9a-f]{32}$/);
  });
});
