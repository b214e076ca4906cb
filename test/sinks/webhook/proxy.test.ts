//! The webhook sink through a real proxy on 127.0.0.1: from the environment, from its
//! `proxy:` key (which overrides the environment, credentials included), and bypassed with
//! `proxy: none`; its healthcheck connects to the proxy.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Sink } from '../../../src/sinks/contract.js';
import { createWebhookSink } from '../../../src/sinks/webhook/index.js';
import { startProxy, type TestProxy } from '../../helpers/proxy.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/receivers.js';
import { batch, captureContext, never, webhookConfig } from './helpers.js';

let receiver: WebhookReceiver;
let envProxy: TestProxy;
let proxy: TestProxy;
const sinks: Sink[] = [];

beforeEach(async () => {
  receiver = await startWebhookReceiver();
  envProxy = await startProxy();
  proxy = await startProxy({ user: 'hook', password: 'hook-proxy-pw-7e' });
  for (const name of ['http_proxy', 'https_proxy', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY']) vi.stubEnv(name, undefined);
  vi.stubEnv('HTTP_PROXY', envProxy.url);
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await Promise.all(sinks.splice(0).map((s) => s.close()));
  await Promise.all([receiver.close(), envProxy.close(), proxy.close()]);
});

function sink(over: Record<string, unknown> = {}): Sink {
  const s = createWebhookSink(webhookConfig(`${receiver.url}/in?k=v`, over), captureContext().ctx);
  sinks.push(s);
  return s;
}

describe('webhook sink behind a proxy', () => {
  it('posts through HTTP_PROXY from the environment', async () => {
    expect(await sink().send(batch(1, 2), never)).toEqual({ status: 'ok' });
    expect(envProxy.uses.map((u) => u.what)).toEqual([`FORWARD ${receiver.url}/in?k=v`]);
    expect(receiver.requests).toHaveLength(1);
  });

  it('posts through its proxy key instead, with the credentials as Proxy-Authorization, which the receiver never sees', async () => {
    const s = sink({ proxy: proxy.urlWith('hook', 'hook-proxy-pw-7e') });
    expect(await s.send(batch(1, 2), never)).toEqual({ status: 'ok' });
    expect(await s.send(batch(3, 3), never)).toEqual({ status: 'ok' });
    expect(envProxy.uses).toEqual([]);
    expect(proxy.uses.map((u) => u.authorization)).toEqual(Array(2).fill(`Basic ${Buffer.from('hook:hook-proxy-pw-7e').toString('base64')}`));
    expect(receiver.requests.map((r) => r.headers['proxy-authorization'])).toEqual([undefined, undefined]);
  });

  it('connects directly with proxy none', async () => {
    expect(await sink({ proxy: 'none' }).send(batch(1, 2), never)).toEqual({ status: 'ok' });
    expect(envProxy.uses).toEqual([]);
    expect(receiver.requests).toHaveLength(1);
  });

  it('retries when the proxy refuses its credentials, naming the proxy but not the password', async () => {
    const outcome = await sink({ proxy: proxy.urlWith('hook', 'not-the-pw-19') }).send(batch(1, 1), never);
    expect(outcome.status).toBe('retry');
    expect((outcome as { error: string }).error).toContain(`through the proxy ${proxy.url}`);
    expect(JSON.stringify(outcome)).not.toContain('not-the-pw-19');
    expect(receiver.requests).toHaveLength(0);
  });

  it('checks its health by connecting to the proxy, sending nothing', async () => {
    const s = sink({ proxy: proxy.urlWith('hook', 'hook-proxy-pw-7e') });
    expect(await s.healthcheck()).toEqual({ ok: true, detail: `through the proxy ${new URL(proxy.url).host} reachable` });
    expect(proxy.uses).toEqual([]);
  });
});
