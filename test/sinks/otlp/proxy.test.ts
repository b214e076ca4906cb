//! The OTLP sink through a real proxy on 127.0.0.1, over each protocol: from the environment,
//! from its `proxy:` key (which overrides the environment, credentials included), and
//! bypassed with `proxy: none`. HTTP is forwarded by the proxy; gRPC goes through a CONNECT
//! tunnel. An https:// proxy, which gRPC cannot use, is refused with the key's path.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../../src/errors.js';
import type { Sink } from '../../../src/sinks/contract.js';
import { checkOtlpBlock } from '../../../src/sinks/otlp/config.js';
import { createOtlpSink } from '../../../src/sinks/otlp/index.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp-receiver.js';
import { startProxy, type TestProxy } from '../../helpers/proxy.js';
import { batchOf, capturingLogger, context, entry, otlpConfig } from './helpers.js';

const signal = new AbortController().signal;
const PASSWORD = 'otlp-proxy-pw-3b';

describe.each([
  { protocol: 'http/protobuf', kind: 'http' },
  { protocol: 'http/json', kind: 'http' },
  { protocol: 'grpc', kind: 'grpc' },
] as const)('OTLP sink over $protocol behind a proxy', ({ protocol, kind }) => {
  let receiver: OtlpReceiver;
  let envProxy: TestProxy;
  let proxy: TestProxy;
  const sinks: Sink[] = [];

  beforeEach(async () => {
    receiver = await startOtlpReceiver({ protocol: kind });
    envProxy = await startProxy();
    proxy = await startProxy({ user: 'otel', password: PASSWORD });
    for (const name of ['http_proxy', 'https_proxy', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY', 'grpc_proxy', 'no_grpc_proxy']) vi.stubEnv(name, undefined);
    vi.stubEnv('HTTP_PROXY', envProxy.url);
  });
  afterEach(async () => {
    vi.unstubAllEnvs();
    await Promise.all(sinks.splice(0).map((s) => s.close()));
    await Promise.all([receiver.close(), envProxy.close(), proxy.close()]);
  });

  async function send(block: Record<string, unknown> = {}): Promise<unknown> {
    const sink = await createOtlpSink(otlpConfig({ endpoint: receiver.endpoint, protocol, timeout: '5s', ...block }), context(capturingLogger().logger));
    sinks.push(sink);
    return sink.send(batchOf([entry(1), entry(2)]), signal);
  }

  const through = (what: TestProxy) => what.uses.map((u) => u.what.replace(/^(FORWARD|CONNECT) .*/, '$1'));
  const receiverTarget = () => (kind === 'grpc' ? `CONNECT ${new URL(receiver.endpoint).host}` : `FORWARD ${receiver.endpoint}/v1/logs`);

  it('exports through HTTP_PROXY from the environment', async () => {
    expect(await send()).toEqual({ status: 'ok' });
    expect(envProxy.uses.map((u) => u.what)).toEqual([receiverTarget()]);
    expect(receiver.logRecords()).toHaveLength(2);
  });

  it('exports through its proxy key instead, with the credentials as Proxy-Authorization', async () => {
    expect(await send({ proxy: proxy.urlWith('otel', PASSWORD) })).toEqual({ status: 'ok' });
    expect(envProxy.uses).toEqual([]);
    expect(proxy.uses).toEqual([{ what: receiverTarget(), authorization: `Basic ${Buffer.from(`otel:${PASSWORD}`).toString('base64')}` }]);
    expect(receiver.requests().map((r) => r.headers['proxy-authorization'])).toEqual([undefined]);
    expect(through(proxy)).toEqual([kind === 'grpc' ? 'CONNECT' : 'FORWARD']);
  });

  it('exports directly with proxy none', async () => {
    expect(await send({ proxy: 'none' })).toEqual({ status: 'ok' });
    expect(envProxy.uses).toEqual([]);
    expect(receiver.logRecords()).toHaveLength(2);
  });

  it('retries when the proxy refuses its credentials (the batch is not at fault), showing them nowhere', async () => {
    const outcome = await send({ proxy: proxy.urlWith('otel', 'not-the-pw-5c') });
    expect(outcome).toMatchObject({ status: 'retry' });
    expect(JSON.stringify(outcome)).not.toContain('not-the-pw-5c');
    expect(JSON.stringify(outcome)).not.toContain(Buffer.from('otel:not-the-pw-5c').toString('base64'));
    expect(receiver.requests()).toEqual([]);
  });

  it.runIf(kind === 'grpc')('refuses an https:// proxy, which gRPC cannot use, at validation and when built', async () => {
    expect(checkOtlpBlock({ type: 'otlp', protocol: 'grpc', proxy: 'https://proxy.example:3128' })).toEqual([{ path: ['proxy'], message: expect.stringMatching(/https:\/\/ proxy, which gRPC cannot use/) }]);
    expect(checkOtlpBlock({ type: 'otlp', protocol: 'http/protobuf', proxy: 'https://proxy.example:3128' })).toEqual([]);
    vi.stubEnv('HTTP_PROXY', 'https://proxy.example:3128');
    await expect(createOtlpSink(otlpConfig({ endpoint: receiver.endpoint, protocol }), context(capturingLogger().logger))).rejects.toThrow(ConfigError);
    await expect(createOtlpSink(otlpConfig({ endpoint: receiver.endpoint, protocol }), context(capturingLogger().logger))).rejects.toThrow(/^sinks\.otel\.proxy: gRPC reaches a proxy over plain HTTP only/);
  });
});
