// TLS to the service: a certificate from a private CA is refused by default with a message
// that says what is wrong, accepted with `caFile` (api.ca_file), and accepted with
// `insecureSkipVerify` (api.insecure_skip_verify) only with a warning in the logs.
// The certificates are made at test time with the openssl CLI.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createApiClient } from '../../src/api/client.js';
import type { ApiClientOptions } from '../../src/api/client-options.js';
import type { Dispatcher } from 'undici';
import { createDispatcher } from '../../src/net/dispatcher.js';
import { failure } from '../api/helpers.js';
import type { ApiClient } from '../../src/api/types.js';
import { parseConfig } from '../../src/cli/config.js';
import { Daemon } from '../../src/daemon/index.js';
import { readNdjsonTree, waitFor } from '../e2e/harness.js';

const TOKEN = 'tok-TLS-test-3e9a41';
const ENTRY = { time: '2024-05-01T12:00:00.123456789Z', log: 'over tls', stream: 'stdout' };

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const OPENSSL = hasOpenssl();
if (!OPENSSL) console.log('tls test: SKIPPED — the openssl CLI is not installed, so no test certificate can be made');

let dir: string;
let server: Server;
let url: string;
let caFile: string;
let otherCaFile: string;
let requests = 0;
const clients: ApiClient[] = [];

/** A CA and a leaf certificate for 127.0.0.1 and localhost signed by it. */
function makeCa(name: string): { key: string; cert: string } {
  const key = join(dir, `${name}-ca.key`);
  const cert = join(dir, `${name}-ca.pem`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=mls test CA ${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], { stdio: 'ignore' });
  return { key, cert };
}

beforeAll(async () => {
  if (!OPENSSL) return;
  dir = mkdtempSync(join(tmpdir(), 'mls-tls-'));
  const ca = makeCa('one');
  otherCaFile = makeCa('two').cert;
  caFile = ca.cert;
  const key = join(dir, 'server.key');
  const csr = join(dir, 'server.csr');
  const cert = join(dir, 'server.pem');
  const ext = join(dir, 'server.ext');
  execFileSync('sh', ['-c', `printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\nextendedKeyUsage=serverAuth\\n' > '${ext}'`]);
  execFileSync('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
  execFileSync('openssl', ['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-out', cert, '-days', '2', '-extfile', ext], { stdio: 'ignore' });

  server = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      requests++;
      if (req.headers.authorization !== TOKEN) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"status":"error","details":"bad token"}');
        return;
      }
      const from = (JSON.parse(body) as { time_from: string }).time_from;
      // one entry, inside the first window asked for
      const details = from <= ENTRY.time ? [ENTRY] : [];
      // `x-close` asks for the connection to be closed after the answer.
      res.writeHead(200, { 'content-type': 'application/json', ...(req.headers['x-close'] ? { connection: 'close' } : {}) }).end(JSON.stringify({ status: 'success', details }));
    });
  });
  server.on('tlsClientError', () => {}); // refused handshakes are expected here
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function client(extra: Partial<ApiClientOptions> = {}): ApiClient {
  const c = createApiClient({ baseUrl: url, token: TOKEN, timeouts: { connectMs: 2000, headersMs: 2000, bodyMs: 2000 }, retry: { deadlineMs: 1500, baseDelayMs: 50, maxDelayMs: 200 }, ...extra });
  clients.push(c);
  return c;
}

const REQ = { modelId: 'm', fromMs: Date.UTC(2024, 4, 1, 12), toMs: Date.UTC(2024, 4, 1, 12, 1) };

/** The status of one logs request sent through `dispatcher`, read whole. */
async function postStatus(dispatcher: Dispatcher): Promise<number> {
  const body = JSON.stringify({ model_id: 'm', time_from: '2024-05-01T12:00:00.000Z', time_to: '2024-05-01T12:01:00.000Z' });
  const res = await dispatcher.request({ origin: url, method: 'POST', path: '/rest/model/logs/get/', headers: { authorization: TOKEN, 'content-type': 'application/json', 'x-close': '1' }, body });
  await res.body.text();
  return res.statusCode;
}

describe.skipIf(!OPENSSL)('TLS to the service', () => {
  it('refuses a certificate from an unknown CA by default, saying it is a certificate problem', async () => {
    const before = requests;
    const err = await failure(client().getLogs(REQ));
    expect(err.code).toBe('MLS_ERR_API_UNAVAILABLE');
    expect(err.message).toContain(url);
    expect(err.message).toMatch(/certificate/i);
    expect(err.message).toMatch(/api\.ca_file/);
    expect(err.message).not.toContain(TOKEN);
    expect(requests).toBe(before); // no request, and so no token, went over the untrusted connection
    console.log(`tls: default refusal reads: ${err.message}`);
  });

  it('resumes the TLS session when the client connects again', async () => {
    const resumed: boolean[] = [];
    const onSecure = (socket: TLSSocket): void => void resumed.push(socket.isSessionReused());
    server.on('secureConnection', onSecure);
    try {
      // The server closes each connection after its answer: every request opens a new one.
      const pool = createDispatcher({ proxy: undefined, tls: { ca: [readFileSync(caFile, 'utf8')] }, connections: 1, connectMs: 2000, headersMs: 2000, bodyMs: 2000 });
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        statuses.push(await postStatus(pool));
      }
      await pool.close();
      expect(statuses).toEqual([200, 200, 200]);
      expect(resumed).toEqual([false, true, true]);
    } finally {
      server.off('secureConnection', onSecure);
    }
  });

  it('refuses it with the wrong CA file too', async () => {
    const err = await failure(client({ caFile: otherCaFile }).getLogs(REQ));
    expect(err.message).toMatch(/certificate/i);
  });

  it('accepts it with the CA file', async () => {
    const page = await client({ caFile }).getLogs(REQ);
    expect(page.entries).toEqual([ENTRY]);
  });

  it('accepts it with verification off, and logs a warning', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
    const page = await client({ insecureSkipVerify: true, logger }).getLogs(REQ);
    expect(page.entries).toEqual([ENTRY]);
    const warnings = lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.level === 40);
    expect(warnings.map((w) => w.msg).join('\n')).toMatch(/TLS certificate verification is off/);
  });

  it('the daemon with api.ca_file ships over TLS; with api.insecure_skip_verify it warns at start', { timeout: 30_000 }, async () => {
    for (const api of [{ ca_file: caFile }, { insecure_skip_verify: true }]) {
      const work = mkdtempSync(join(dir, 'daemon-'));
      const lines: string[] = [];
      const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
      const config = parseConfig(
        {
          api: { base_url: url, token: TOKEN, ...api },
          state: { path: join(work, 'state.db') },
          poll: { interval: '200ms', settle: '0s', lookback: '1s', start_at: '2024-05-01T12:00:00Z', max_window: '1h', rate_limit: 'none', reread: { ages: [] } },
          models: [{ id: 'm' }],
          sinks: [{ name: 'files', type: 'file', path: join(work, 'out', '{model_id}.ndjson'), batch: { max_delay: '20ms' } }],
        },
        { baseDir: work, env: {} },
      );
      const daemon = await Daemon.start({ config, logger });
      try {
        await waitFor(() => readNdjsonTree(join(work, 'out')).length > 0, 15_000, 'the entry over TLS');
      } finally {
        await daemon.stop();
      }
      expect(readNdjsonTree(join(work, 'out')).map((e) => e.log)).toEqual(['over tls']);
      const warns = lines.filter((l) => /verification/i.test(l) && l.includes('"level":40'));
      if ('insecure_skip_verify' in api) expect(warns.length).toBeGreaterThanOrEqual(1);
      else expect(warns).toHaveLength(0);
      expect(lines.join('\n')).not.toContain(TOKEN);
    }
  });
});
