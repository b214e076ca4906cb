//! How the webhook sink maps answers and failures to outcomes, keeps secrets out of
//! errors, trusts ca_file, checks health and closes.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.js';
import type { SendOutcome } from '../../../src/sinks/contract.js';
import { createWebhookSink } from '../../../src/sinks/webhook/index.js';
import { scrubSecrets } from '../../../src/telemetry/secrets.js';
import { tempDir } from '../../helpers/delivery.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/receivers.js';
import { batch, captureContext, never, webhookConfig } from './helpers.js';

let receiver: WebhookReceiver;
beforeEach(async () => {
  receiver = await startWebhookReceiver();
});
afterEach(async () => {
  await receiver.close();
});

describe('webhook sink outcomes', () => {
  it.each([
    [200, 'ok'],
    [201, 'ok'],
    [204, 'ok'],
    [400, 'reject'],
    [401, 'reject'],
    [403, 'reject'],
    [404, 'reject'],
    [413, 'reject'],
    [408, 'retry'],
    [429, 'retry'],
    [500, 'retry'],
    [502, 'retry'],
    [503, 'retry'],
  ] as const)('maps HTTP %i to %s', async (status, expected) => {
    const sink = createWebhookSink(webhookConfig(receiver.url), captureContext().ctx);
    if (status >= 300) receiver.failNext(status, 1, undefined, `nope ${status}`);
    else receiver.failNext(status, 1, undefined, '');
    const outcome = await sink.send(batch(1, 3), never);
    await sink.close();
    expect(outcome.status).toBe(expected);
    if (outcome.status !== 'ok') expect(outcome.error).toBe(`HTTP ${status}: nope ${status}`);
    if (outcome.status === 'retry') expect(outcome.afterMs).toBeUndefined();
  });

  it('quotes at most 300 characters of the response body, on one line', async () => {
    const sink = createWebhookSink(webhookConfig(receiver.url), captureContext().ctx);
    receiver.failNext(400, 1, undefined, 'field "log"\n  is invalid: ' + 'x'.repeat(5000));
    const outcome = await sink.send(batch(1, 1), never);
    await sink.close();
    expect(outcome.status).toBe('reject');
    const error = (outcome as { error: string }).error;
    expect(error.startsWith('HTTP 400: field "log" is invalid: xxx')).toBe(true);
    expect(error.length).toBeLessThanOrEqual('HTTP 400: '.length + 300);
  });

  it('waits as long as Retry-After says, in seconds', async () => {
    const sink = createWebhookSink(webhookConfig(receiver.url), captureContext().ctx);
    receiver.failNext(429, 1, '7');
    const outcome = await sink.send(batch(1, 1), never);
    await sink.close();
    expect(outcome).toMatchObject({ status: 'retry', afterMs: 7000 });
  });

  it('waits until the HTTP date of Retry-After', async () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    const sink = createWebhookSink(webhookConfig(receiver.url), captureContext('hook', () => now).ctx);
    receiver.failNext(503, 1, new Date(now + 12_000).toUTCString());
    const outcome = await sink.send(batch(1, 1), never);
    await sink.close();
    expect(outcome).toMatchObject({ status: 'retry', afterMs: 12_000 });
  });

  it('never waits longer than retry.max_delay, whatever Retry-After asks', async () => {
    const sink = createWebhookSink(webhookConfig(receiver.url, { retry: { max_delay: '5s' } }), captureContext().ctx);
    receiver.failNext(503, 1, '86400');
    expect(await sink.send(batch(1, 1), never)).toMatchObject({ status: 'retry', afterMs: 5000 });
    await sink.close();
  });

  it('retries when the connection is refused', async () => {
    await receiver.stop();
    const sink = createWebhookSink(webhookConfig(receiver.url), captureContext().ctx);
    const outcome = await sink.send(batch(1, 1), never);
    await sink.close();
    expect(outcome.status).toBe('retry');
    expect((outcome as { error: string }).error).toContain('ECONNREFUSED');
  });

  it('retries when the receiver does not answer within timeout, without waiting for it', async () => {
    receiver.setDelay(3000);
    const sink = createWebhookSink(webhookConfig(receiver.url, { timeout: '200ms' }), captureContext().ctx);
    const started = performance.now();
    const outcome = await sink.send(batch(1, 1), never);
    const took = performance.now() - started;
    await sink.close();
    expect(outcome).toEqual({ status: 'retry', error: `POST ${receiver.url}: no response within 200 ms` });
    expect(took).toBeLessThan(2000);
  });

  it('gives up a request when the delivery loop stops, reporting retry', async () => {
    receiver.setDelay(3000);
    const sink = createWebhookSink(webhookConfig(receiver.url), captureContext().ctx);
    const stop = new AbortController();
    const pending = sink.send(batch(1, 1), stop.signal);
    setTimeout(() => stop.abort(), 50);
    expect(await pending).toEqual({ status: 'retry', error: 'aborted' });
    await sink.close();
  });

  it('keeps header values and the signing secret out of every error', async () => {
    const secrets = ['Bearer tok-9f8e7d6c5b4a', 'key-0a1b2c3d4e', 'whsec-5f6e7d8c9b'];
    const config = webhookConfig(`${receiver.url}?api_key=key-in-query-77`, {
      headers: { Authorization: secrets[0], 'X-Api-Key': secrets[1] },
      signing_secret: secrets[2],
    });
    const sink = createWebhookSink(config, captureContext().ctx);
    const outcomes: SendOutcome[] = [];
    receiver.failNext(401, 1, undefined, `refused ${secrets[0]} and ${secrets[1]} signed with ${secrets[2]}`);
    outcomes.push(await sink.send(batch(1, 1), never));
    receiver.failNext(503, 1, undefined, `echo: ${secrets.join(' ')}`);
    outcomes.push(await sink.send(batch(1, 1), never));
    await receiver.stop();
    outcomes.push(await sink.send(batch(1, 1), never));
    await sink.close();
    const text = JSON.stringify(outcomes);
    expect(text).toContain('HTTP 401: refused [REDACTED]');
    expect(text).toContain('ECONNREFUSED');
    for (const s of [...secrets, 'key-in-query-77']) expect(text).not.toContain(s);
    // The loader registered them (as the daemon's does): the logger scrubs them too.
    for (const s of secrets) expect(scrubSecrets(`x ${s} y`)).toBe('x [REDACTED] y');
  });

  it('refuses a ca_file it cannot read, naming the option', () => {
    expect(() => createWebhookSink(webhookConfig('https://127.0.0.1:1/hook', { ca_file: '/nonexistent/ca.pem' }), captureContext().ctx)).toThrow(ConfigError);
    expect(() => createWebhookSink(webhookConfig('https://127.0.0.1:1/hook', { ca_file: '/nonexistent/ca.pem' }), captureContext().ctx)).toThrow(/sinks\.hook\.ca_file/);
  });

  it('trusts the certificate authority of ca_file for an https receiver', async () => {
    const tmp = tempDir();
    try {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', `${tmp.dir}/key.pem`, '-out', `${tmp.dir}/cert.pem`], { stdio: 'ignore' });
      const server = createHttpsServer({ key: readFileSync(`${tmp.dir}/key.pem`), cert: readFileSync(`${tmp.dir}/cert.pem`) }, (req, res) => {
        req.resume().on('end', () => res.writeHead(204).end());
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      try {
        const untrusting = createWebhookSink(webhookConfig(url), captureContext().ctx);
        expect((await untrusting.send(batch(1, 1), never)).status).toBe('retry');
        await untrusting.close();
        writeFileSync(`${tmp.dir}/ca.pem`, readFileSync(`${tmp.dir}/cert.pem`));
        const trusting = createWebhookSink(webhookConfig(url, { ca_file: `${tmp.dir}/ca.pem` }), captureContext().ctx);
        expect(await trusting.send(batch(1, 1), never)).toEqual({ status: 'ok' });
        await trusting.close();
      } finally {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      }
    } finally {
      tmp.remove();
    }
  });
});

describe('webhook sink lifecycle', () => {
  it('checks health with a TCP connect, sending no request', async () => {
    const sink = createWebhookSink(webhookConfig(receiver.url), captureContext().ctx);
    expect(await sink.healthcheck()).toEqual({ ok: true, detail: `${new URL(receiver.url).host} reachable` });
    await receiver.stop();
    const down = await sink.healthcheck();
    expect(down.ok).toBe(false);
    expect(down.detail).toContain('ECONNREFUSED');
    expect(receiver.requests).toHaveLength(0);
    await sink.close();
  });

  it('closes idempotently, and reports retry for a batch sent after close', async () => {
    const sink = createWebhookSink(webhookConfig(receiver.url), captureContext().ctx);
    await sink.send(batch(1, 1), never);
    const first = sink.close();
    expect(sink.close()).toBe(first);
    await first;
    expect(sink.close()).toBe(first);
    expect(await sink.send(batch(2, 2), never)).toEqual({ status: 'retry', error: 'the webhook sink is closed' });
    await sink.flush();
  });
});
