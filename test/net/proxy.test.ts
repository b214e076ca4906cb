//! The proxy of an endpoint: the `proxy:` setting first, else the environment read exactly as
//! undici's EnvHttpProxyAgent reads it, which each case here checks against undici itself
//! through a real proxy on 127.0.0.1.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EnvHttpProxyAgent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { proxyFor, proxyLabel } from '../../src/net/proxy.js';
import { scrubSecrets } from '../../src/telemetry/secrets.js';
import { startProxy, type TestProxy } from '../helpers/proxy.js';

const PROXY_VARS = ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY'];

let proxy: TestProxy;
let server: Server;
let port: number;

beforeAll(async () => {
  proxy = await startProxy();
  server = createServer((_req, res) => res.end('direct'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await proxy.close();
  await new Promise((resolve) => server.close(resolve));
});
afterEach(() => {
  vi.unstubAllEnvs();
});

/** Sets exactly these proxy variables (the others unset). */
function environment(vars: Record<string, string>): void {
  for (const name of PROXY_VARS) vi.stubEnv(name, vars[name]);
}

/** Whether undici's EnvHttpProxyAgent sent a request for `target` through the proxy. */
async function undiciUsesProxy(target: string): Promise<boolean> {
  const before = proxy.uses.length;
  const agent = new EnvHttpProxyAgent();
  try {
    const res = await agent.request({ origin: target, path: '/', method: 'GET' });
    await res.body.dump();
  } catch {
    // an https target through the tunnel, or directly, fails its handshake: the proxy has counted it already
  } finally {
    await agent.destroy();
  }
  return proxy.uses.length > before;
}

describe('the proxy from the environment, as undici reads it', () => {
  const cases: Array<[string, () => Record<string, string>, string]> = [
    ['HTTP_PROXY alone', () => ({ HTTP_PROXY: proxy.url }), 'http://127.0.0.1:PORT'],
    ['http_proxy before HTTP_PROXY', () => ({ http_proxy: proxy.url, HTTP_PROXY: 'http://127.0.0.1:9' }), 'http://127.0.0.1:PORT'],
    ['an empty http_proxy hides HTTP_PROXY', () => ({ http_proxy: '', HTTP_PROXY: proxy.url }), 'http://127.0.0.1:PORT'],
    ['an https target through HTTP_PROXY when no HTTPS_PROXY', () => ({ HTTP_PROXY: proxy.url }), 'https://127.0.0.1:PORT'],
    ['an https target through HTTPS_PROXY', () => ({ HTTPS_PROXY: proxy.url, HTTP_PROXY: 'http://127.0.0.1:9' }), 'https://127.0.0.1:PORT'],
    ['an http target ignores HTTPS_PROXY', () => ({ HTTPS_PROXY: proxy.url }), 'http://127.0.0.1:PORT'],
    ['NO_PROXY=*', () => ({ HTTP_PROXY: proxy.url, NO_PROXY: '*' }), 'http://127.0.0.1:PORT'],
    ['NO_PROXY naming the address', () => ({ HTTP_PROXY: proxy.url, NO_PROXY: 'example.test, 127.0.0.1' }), 'http://127.0.0.1:PORT'],
    ['NO_PROXY naming the address and port', () => ({ HTTP_PROXY: proxy.url, NO_PROXY: `127.0.0.1:${port}` }), 'http://127.0.0.1:PORT'],
    ['NO_PROXY naming another port', () => ({ HTTP_PROXY: proxy.url, NO_PROXY: `127.0.0.1:${port + 1}` }), 'http://127.0.0.1:PORT'],
    ['NO_PROXY as a suffix', () => ({ HTTP_PROXY: proxy.url, NO_PROXY: '.0.0.1' }), 'http://127.0.0.1:PORT'],
    ['NO_PROXY as a wildcard suffix', () => ({ HTTP_PROXY: proxy.url, NO_PROXY: '*.0.1' }), 'http://127.0.0.1:PORT'],
    ['NO_PROXY naming a host name', () => ({ HTTP_PROXY: proxy.url, NO_PROXY: 'localhost' }), 'http://localhost:PORT'],
    ['NO_PROXY naming a longer name', () => ({ HTTP_PROXY: proxy.url, NO_PROXY: 'alocalhost' }), 'http://localhost:PORT'],
    ['no_proxy before NO_PROXY', () => ({ HTTP_PROXY: proxy.url, no_proxy: 'example.test', NO_PROXY: '*' }), 'http://127.0.0.1:PORT'],
    ['no proxy at all', () => ({ NO_PROXY: 'example.test' }), 'http://127.0.0.1:PORT'],
  ];

  it.each(cases)('%s: the same choice as EnvHttpProxyAgent', async (_name, vars, targetPattern) => {
    environment(vars());
    const target = targetPattern.replace('PORT', String(port));
    const ours = proxyFor(new URL(target), undefined, 'api.proxy');
    expect(ours === undefined ? undefined : ours.href).toBe((await undiciUsesProxy(target)) ? `${proxy.url}/` : undefined);
  });
});

describe('the proxy setting of an endpoint', () => {
  it('a URL overrides the environment; none bypasses it', () => {
    environment({ HTTP_PROXY: 'http://env-proxy.example:3128' });
    const target = new URL('http://service.example/');
    expect(proxyFor(target, 'http://set.example:8080', 'api.proxy')?.href).toBe('http://set.example:8080/');
    expect(proxyFor(target, false, 'api.proxy')).toBeUndefined();
    expect(proxyFor(target, undefined, 'api.proxy')?.href).toBe('http://env-proxy.example:3128/');
  });

  it('refuses a proxy that is not an http(s) URL, naming where it came from and not showing it', () => {
    environment({ HTTPS_PROXY: 'socks5://user:pw-secret-1@host:1080' });
    const target = new URL('https://service.example/');
    expect(() => proxyFor(target, undefined, 'api.proxy')).toThrow(ConfigError);
    expect(() => proxyFor(target, undefined, 'api.proxy')).toThrow(/^HTTPS_PROXY: the proxy must be an http:\/\/ or https:\/\/ URL/);
    expect(() => proxyFor(target, 'proxy.example:3128', 'sinks.hook.proxy')).toThrow(/^sinks\.hook\.proxy: /);
    try {
      proxyFor(target, undefined, 'api.proxy');
    } catch (err) {
      expect(String(err)).not.toContain('pw-secret-1');
    }
  });

  it('registers the password as a secret, and labels the proxy without credentials', () => {
    const found = proxyFor(new URL('http://service.example/'), 'http://alice:s3cret%2Fpass@proxy.example:3128', 'api.proxy')!;
    expect(proxyLabel(found)).toBe('http://proxy.example:3128');
    expect(scrubSecrets('password s3cret/pass')).toBe('password [REDACTED]');
    expect(scrubSecrets(`Basic ${Buffer.from('alice:s3cret/pass').toString('base64')}`)).toContain('[REDACTED]');
  });
});
