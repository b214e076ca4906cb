import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createNetServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Sink } from '../../../src/sinks/contract.js';
import { createOtlpSink, exportTarget, nsToHrTime, msToHrTime, type OtlpSinkOptions } from '../../../src/sinks/otlp/index.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp-receiver.js';
import { batchOf, capturingLogger, context, entry, otlpConfig } from './helpers.js';

const signal = new AbortController().signal;

const PROTOCOLS = [
  { protocol: 'http/protobuf', kind: 'http', encoding: 'protobuf' },
  { protocol: 'http/json', kind: 'http', encoding: 'json' },
  { protocol: 'grpc', kind: 'grpc', encoding: 'grpc' },
] as const;

describe.each(PROTOCOLS)('OTLP sink over $protocol', ({ protocol, kind, encoding }) => {
  let receiver: OtlpReceiver;
  const sinks: Sink[] = [];

  beforeEach(async () => {
    receiver = await startOtlpReceiver({ protocol: kind });
  });
  afterEach(async () => {
    await Promise.all(sinks.splice(0).map((s) => s.close()));
    await receiver.close();
  });

  async function open(block: Record<string, unknown> = {}, options: OtlpSinkOptions = {}, logger = capturingLogger().logger): Promise<Sink> {
    const sink = await createOtlpSink(otlpConfig({ endpoint: receiver.endpoint, protocol, timeout: '2s', ...block }), context(logger), options);
    sinks.push(sink);
    return sink;
  }

  it('delivers each entry time exact to the nanosecond, with body, stream and model id', async () => {
    const sink = await open();
    const times = ['2026-11-22T10:00:00.123456789Z', '2026-11-22T10:00:00.000000001Z', '2026-11-22T10:00:00.999999999Z', '2026-11-22T10:00:00Z', '2026-11-22T11:00:00.5+01:00'];
    const es = times.map((time, i) => entry(i + 1, { time, stream: i % 2 ? 'stderr' : 'stdout', fetchedAtMs: 1_795_341_601_250 + i }));
    expect(await sink.send(batchOf(es), signal)).toEqual({ status: 'ok' });

    const got = receiver.logRecords();
    expect(got.map((r) => r.timeUnixNano)).toEqual([1795341600123456789n, 1795341600000000001n, 1795341600999999999n, 1795341600000000000n, 1795341600500000000n]);
    expect(got.map((r) => r.observedTimeUnixNano)).toEqual(es.map((e) => BigInt(e.fetchedAtMs) * 1_000_000n));
    expect(got.map((r) => r.body)).toEqual(es.map((e) => e.log));
    expect(got.map((r) => r.attributes)).toEqual(es.map((e) => ({ 'log.iostream': e.stream, 'mls.model_id': 'model-a' })));
    expect(got.every((r) => r.severityText === undefined && r.severityNumber === undefined)).toBe(true);
    expect(receiver.requests()).toMatchObject([{ encoding, status: 200, records: 5, resourceLogs: 1 }]);
  });

  it('gives each model its own resource: service.name is the model id, then the sink and model attributes', async () => {
    const modelResources = new Map([['model-b', { 'service.name': 'billing', team: 'payments' }]]);
    const sink = await open({ resource: { 'deployment.environment': 'prod', team: 'ml' } }, { modelResources });
    const es = [entry(1, { modelId: 'model-a' }), entry(2, { modelId: 'model-b' }), entry(3, { modelId: 'model-a' }), entry(4, { modelId: 'model-c' })];
    expect(await sink.send(batchOf(es), signal)).toEqual({ status: 'ok' });

    const byBody = new Map(receiver.logRecords().map((r) => [r.body, r]));
    expect(byBody.get('line 1')!.resource).toEqual({ 'service.name': 'model-a', 'deployment.environment': 'prod', team: 'ml' });
    expect(byBody.get('line 2')!.resource).toEqual({ 'service.name': 'billing', 'deployment.environment': 'prod', team: 'payments' });
    expect(byBody.get('line 3')!.resource).toEqual(byBody.get('line 1')!.resource);
    expect(byBody.get('line 4')!.resource).toEqual({ 'service.name': 'model-c', 'deployment.environment': 'prod', team: 'ml' });
    expect(byBody.get('line 2')!.attributes['mls.model_id']).toBe('model-b');
    // One ResourceLogs per model, even across batches of the same sink.
    expect(receiver.requests()[0]).toMatchObject({ records: 4, resourceLogs: 3 });
    expect(await sink.send(batchOf([entry(5, { modelId: 'model-b' }), entry(6, { modelId: 'model-a' })]), signal)).toEqual({ status: 'ok' });
    expect(receiver.requests()[1]).toMatchObject({ records: 2, resourceLogs: 2 });
  });

  it('maps streams to severity only where configured', async () => {
    const sink = await open({ severity: { stderr: 'ERROR', stdout: 'INFO' } });
    const es = [entry(1, { stream: 'stdout' }), entry(2, { stream: 'stderr' }), entry(3, { stream: 'other' })];
    expect(await sink.send(batchOf(es), signal)).toEqual({ status: 'ok' });
    expect(receiver.logRecords().map((r) => [r.severityText, r.severityNumber])).toEqual([
      ['INFO', 9],
      ['ERROR', 17],
      [undefined, undefined],
    ]);
  });

  it('keeps empty, multi-line, unicode and 9 KB bodies intact', async () => {
    const sink = await open();
    const bodies = ['', 'first\nsecond\r\nthird', 'naïve — 日本語 🚀 \u0000 end', 'x'.repeat(9 * 1024)];
    expect(await sink.send(batchOf(bodies.map((log, i) => entry(i + 1, { log }))), signal)).toEqual({ status: 'ok' });
    expect(receiver.logRecords().map((r) => r.body)).toEqual(bodies);
  });

  it('answers retry when the receiver fails with 500, and delivers once on the next attempt', async () => {
    const sink = await open();
    receiver.failNext(500, 1);
    const batch = batchOf([entry(1), entry(2)]);
    expect(await sink.send(batch, signal)).toMatchObject({ status: 'retry' });
    expect(receiver.logRecords()).toEqual([]);
    expect(await sink.send(batch, signal)).toEqual({ status: 'ok' });
    expect(receiver.logRecords().map((r) => r.body)).toEqual(['line 1', 'line 2']);
  });

  it.each([400, 401, 403, 404, 413])('rejects a batch the receiver refuses with %i', async (status) => {
    const sink = await open();
    receiver.failNext(status, 1);
    const out = await sink.send(batchOf([entry(1)]), signal);
    expect(out.status).toBe('reject');
    expect(receiver.logRecords()).toEqual([]);
  });

  it('answers retry while the receiver is down, and delivers once it is back', async () => {
    const sink = await open({ timeout: '500ms' });
    await receiver.setDown(true);
    const batch = batchOf([entry(1)]);
    expect(await sink.send(batch, signal)).toMatchObject({ status: 'retry' });
    await receiver.setDown(false);
    let out = await sink.send(batch, signal);
    // A gRPC channel may still be backing off from the refused connection.
    for (let i = 0; i < 20 && out.status === 'retry'; i++) {
      await new Promise((r) => setTimeout(r, 250));
      out = await sink.send(batch, signal);
    }
    expect(out).toEqual({ status: 'ok' });
    expect(receiver.logRecords().map((r) => r.body)).toEqual(['line 1']);
  });

  it('sends the configured headers and never logs their values', async () => {
    const secret = `key-${protocol.replace('/', '-')}-7f3a9c`;
    const capture = capturingLogger();
    const sink = await open({ headers: { 'X-Api-Key': secret, 'X-Tenant': 'acme' } }, {}, capture.logger);
    receiver.failNext(500, 1);
    const failed = await sink.send(batchOf([entry(1)]), signal);
    expect(await sink.send(batchOf([entry(1)]), signal)).toEqual({ status: 'ok' });
    for (const req of receiver.requests()) expect(req.headers).toMatchObject({ 'x-api-key': secret, 'x-tenant': 'acme' });
    capture.logger.warn({ error: failed.status === 'ok' ? '' : failed.error, headers: { 'X-Api-Key': secret } }, `send failed with key ${secret}`);
    expect(capture.text()).not.toContain(secret);
    expect(capture.text()).toContain('[REDACTED]');
  });

  it('closes once: a second close returns the same promise, a later send is a retry', async () => {
    const sink = await open();
    expect(await sink.send(batchOf([entry(1)]), signal)).toEqual({ status: 'ok' });
    await sink.flush();
    const first = sink.close();
    expect(sink.close()).toBe(first);
    await first;
    expect(await sink.send(batchOf([entry(2)]), signal)).toMatchObject({ status: 'retry' });
    expect(receiver.logRecords()).toHaveLength(1);
  });

  it('reports the receiver reachable, or not once it is down', async () => {
    const sink = await open();
    expect(await sink.healthcheck()).toMatchObject({ ok: true });
    await receiver.setDown(true);
    expect(await sink.healthcheck()).toMatchObject({ ok: false });
  });
});

describe('OTLP sink over HTTP: transport details', () => {
  let receiver: OtlpReceiver;
  const sinks: Sink[] = [];
  const servers: Server[] = [];
  beforeEach(async () => {
    receiver = await startOtlpReceiver({ protocol: 'http' });
  });
  afterEach(async () => {
    await Promise.all(sinks.splice(0).map((s) => s.close()));
    await receiver.close();
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      s.close();
    }
  });
  async function open(block: Record<string, unknown>): Promise<Sink> {
    const sink = await createOtlpSink(otlpConfig({ endpoint: receiver.endpoint, ...block }), context(capturingLogger().logger));
    sinks.push(sink);
    return sink;
  }

  it('gzips requests by default and not with compression none', async () => {
    const gz = await open({ protocol: 'http/protobuf' });
    const plain = await open({ protocol: 'http/json', compression: 'none' });
    expect(await gz.send(batchOf([entry(1)]), signal)).toEqual({ status: 'ok' });
    expect(await plain.send(batchOf([entry(2)]), signal)).toEqual({ status: 'ok' });
    expect(receiver.requests().map((r) => [r.encoding, r.gzip])).toEqual([
      ['protobuf', true],
      ['json', false],
    ]);
    expect(receiver.requests()[0]!.headers['content-type']).toBe('application/x-protobuf');
    expect(receiver.requests()[1]!.headers['content-type']).toBe('application/json');
  });

  it('accepts an endpoint that already ends with /v1/logs', async () => {
    const sink = await open({ endpoint: `${receiver.endpoint}/v1/logs` });
    expect(await sink.send(batchOf([entry(1)]), signal)).toEqual({ status: 'ok' });
    expect(receiver.logRecords()).toHaveLength(1);
  });

  it('lets the exporter honour a short Retry-After on 429 within the export timeout', async () => {
    const sink = await open({ timeout: '5s' });
    receiver.failNext(429, 1, 1);
    expect(await sink.send(batchOf([entry(1)]), signal)).toEqual({ status: 'ok' });
    expect(receiver.requests().map((r) => r.status)).toEqual([429, 200]);
    expect(receiver.logRecords()).toHaveLength(1);
  });

  it('answers retry on 503 whose Retry-After exceeds the timeout (the delay is not exposed)', async () => {
    const sink = await open({ timeout: '500ms' });
    receiver.failNext(503, 1, 30);
    const out = await sink.send(batchOf([entry(1)]), signal);
    expect(out).toMatchObject({ status: 'retry' });
    expect(receiver.requests()).toHaveLength(1);
  });

  it('answers retry when the receiver does not answer within the timeout', async () => {
    const sockets: Socket[] = [];
    const silent = createNetServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const sink = await open({ endpoint: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, timeout: '300ms' });
      const started = Date.now();
      expect(await sink.send(batchOf([entry(1)]), signal)).toMatchObject({ status: 'retry' });
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });

  it('scrubs header values that a receiver echoes in an error body', async () => {
    const secret = 'echoed-secret-4b1d';
    const echo = createHttpServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(400).end(`invalid key ${String(req.headers['x-api-key'])}`));
    });
    servers.push(echo);
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    const sink = await open({ endpoint: `http://127.0.0.1:${(echo.address() as AddressInfo).port}`, headers: { 'X-Api-Key': secret } });
    const out = await sink.send(batchOf([entry(1)]), signal);
    expect(out.status).toBe('reject');
    expect(out.status !== 'ok' && out.error).toContain('HTTP 400');
    expect(JSON.stringify(out)).not.toContain(secret);
  });
});

describe('OTLP sink over gRPC: status details', () => {
  it('retries RESOURCE_EXHAUSTED after the RetryInfo delay', async () => {
    const receiver = await startOtlpReceiver({ protocol: 'grpc' });
    const sink = await createOtlpSink(otlpConfig({ endpoint: receiver.endpoint, protocol: 'grpc' }), context(capturingLogger().logger));
    try {
      receiver.failNext(429, 1, 7);
      expect(await sink.send(batchOf([entry(1)]), signal)).toMatchObject({ status: 'retry', afterMs: 7000 });
      receiver.failNext(503, 1);
      const out = await sink.send(batchOf([entry(1)]), signal);
      expect(out.status).toBe('retry');
      expect(out).not.toHaveProperty('afterMs');
      expect(receiver.requests().map((r) => r.status)).toEqual([429, 503]);
    } finally {
      await sink.close();
      await receiver.close();
    }
  });
});

describe('OTLP mapping helpers', () => {
  it('splits nanoseconds into [seconds, nanos] exactly', () => {
    expect(nsToHrTime(1795341600123456789n)).toEqual([1795341600, 123456789]);
    expect(nsToHrTime(0n)).toEqual([0, 0]);
    expect(nsToHrTime(-1n)).toEqual([-1, 999999999]);
    expect(msToHrTime(1_795_341_601_250)).toEqual([1795341601, 250_000_000]);
  });

  it('builds the export URL from the endpoint and protocol', () => {
    expect(exportTarget({ protocol: 'http/protobuf', endpoint: 'http://collector:4318' })).toBe('http://collector:4318/v1/logs');
    expect(exportTarget({ protocol: 'http/json', endpoint: 'https://otel.example.com/ingest/' })).toBe('https://otel.example.com/ingest/v1/logs');
    expect(exportTarget({ protocol: 'http/protobuf', endpoint: 'http://collector:4318/v1/logs' })).toBe('http://collector:4318/v1/logs');
    expect(exportTarget({ protocol: 'http/protobuf', endpoint: undefined })).toBe('http://localhost:4318/v1/logs');
    expect(exportTarget({ protocol: 'grpc', endpoint: undefined })).toBe('http://localhost:4317');
    expect(exportTarget({ protocol: 'grpc', endpoint: 'https://collector:4317' })).toBe('https://collector:4317');
  });

  it('fails early, naming the option, when a TLS file cannot be read', async () => {
    const config = otlpConfig({ endpoint: 'https://collector:4318', tls: { ca_file: '/nonexistent/ca.pem' } });
    await expect(createOtlpSink(config, context(capturingLogger().logger))).rejects.toThrow(/tls\.ca_file/);
  });
});
