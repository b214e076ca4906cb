//! TLS trust of every HTTP path: Node's default store (with NODE_EXTRA_CA_CERTS) plus a
//! configured CA file, both at once. Two services on 127.0.0.1, one signed by the CA that
//! NODE_EXTRA_CA_CERTS names and one by the CA of `ca_file`, are reached by the service
//! client, the webhook sink and the OTLP sink of a child process (NODE_EXTRA_CA_CERTS is read
//! when Node starts).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_OPENSSL, makeCa, type TestCa } from '../helpers/certs.js';
import { ROOT } from '../e2e/harness.js';

let dir: string;
let extra: TestCa;
let configured: TestCa;
const servers: Server[] = [];
const urls: Record<'extra' | 'configured', string> = { extra: '', configured: '' };

/** An https server with `ca`'s certificate: a logs page for the service client, 200 for the sinks. */
async function serve(ca: TestCa): Promise<string> {
  const server = createServer(ca.server, (req, res) => {
    req.resume().on('end', () => {
      const body = req.url?.startsWith('/rest/') ? JSON.stringify({ status: 'success', details: [] }) : '{}';
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  });
  server.on('tlsClientError', () => {}); // refused handshakes are expected here
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  if (!HAS_OPENSSL) return;
  dir = mkdtempSync(join(tmpdir(), 'mls-trust-'));
  extra = makeCa(dir, 'extra');
  configured = makeCa(dir, 'configured');
  urls.extra = await serve(extra);
  urls.configured = await serve(configured);
});
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** In a child process: each path's answer for each service, `ok` or the error. */
const SCRIPT = `
const dist = process.env.DIST;
const { createApiClient } = await import(dist + '/api/client.js');
const { createWebhookSink } = await import(dist + '/sinks/webhook/index.js');
const { webhookSinkSchema } = await import(dist + '/sinks/webhook/config.js');
const { createOtlpSink } = await import(dist + '/sinks/otlp/index.js');
const { otlpSinkSchema } = await import(dist + '/sinks/otlp/config.js');
const urls = JSON.parse(process.env.URLS);
const caFile = process.env.CA_FILE || undefined;
const logger = { debug() {}, info() {}, warn() {}, error() {} };
const ctx = { name: 'x', state: undefined, now: Date.now, logger };
const batch = { id: 'x-1-1', firstSeq: 1, lastSeq: 1, entries: [{ seq: 1, modelId: 'm', time: '2026-01-01T00:00:00Z', timeNs: 1767225600000000000n, stream: 'stdout', log: 'hi', fetchedAtMs: 0 }] };
const out = {};
for (const [name, url] of Object.entries(urls)) {
  const api = createApiClient({ baseUrl: url, token: 'tok-trust-1', caFile, proxy: false, retry: { deadlineMs: 2000, baseDelayMs: 5000, maxDelayMs: 5000 } });
  out['api ' + name] = await api.getLogs({ modelId: 'm', fromMs: 0, toMs: 1 }).then(() => 'ok', (e) => e.message);
  await api.close();
  const hook = createWebhookSink(webhookSinkSchema.parse({ name: 'x', type: 'webhook', url: url + '/hook', proxy: 'none', ...(caFile ? { ca_file: caFile } : {}) }), ctx);
  const sent = await hook.send(batch, new AbortController().signal);
  out['webhook ' + name] = sent.status === 'ok' ? 'ok' : sent.error;
  await hook.close();
  const otlp = await createOtlpSink(otlpSinkSchema.parse({ name: 'x', type: 'otlp', protocol: 'http/json', endpoint: url, proxy: 'none', ...(caFile ? { tls: { ca_file: caFile } } : {}) }), ctx);
  const exported = await otlp.send(batch, new AbortController().signal);
  out['otlp ' + name] = exported.status === 'ok' ? 'ok' : exported.error;
  await otlp.close();
}
console.log(JSON.stringify(out));
`;

async function answers(caFile: string | undefined): Promise<Record<string, string>> {
  const env = { ...process.env, NODE_EXTRA_CA_CERTS: extra.certFile, DIST: join(ROOT, 'dist'), URLS: JSON.stringify(urls), CA_FILE: caFile ?? '' };
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', SCRIPT], { env });
  return JSON.parse(stdout) as Record<string, string>;
}

describe.skipIf(!HAS_OPENSSL)('trusted certificate authorities', () => {
  it('with a CA file, every path trusts both that CA and the one of NODE_EXTRA_CA_CERTS', async () => {
    const got = await answers(configured.certFile);
    expect(got).toEqual({ 'api extra': 'ok', 'webhook extra': 'ok', 'otlp extra': 'ok', 'api configured': 'ok', 'webhook configured': 'ok', 'otlp configured': 'ok' });
  });

  it('without one, NODE_EXTRA_CA_CERTS alone is trusted, and the refusal names the setting to use', async () => {
    const got = await answers(undefined);
    expect([got['api extra'], got['webhook extra'], got['otlp extra']]).toEqual(['ok', 'ok', 'ok']);
    expect(got['api configured']).toMatch(/not signed by a trusted CA .*set api\.ca_file/);
    expect(got['webhook configured']).toMatch(/not signed by a trusted CA .*set sinks\.x\.ca_file/);
    expect(got['otlp configured']).not.toBe('ok');
  });
});
