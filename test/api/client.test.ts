import { afterEach, describe, expect, it, vi } from 'vitest';
import { pino } from 'pino';
import { createApiClient } from '../../src/api/client.js';
import type { ApiClientOptions } from '../../src/api/client-options.js';
import { BodyPool } from '../../src/api/body-pool.js';
import {
  ApiAuthError,
  ApiClientError,
  ApiError,
  ApiProtocolError,
  ApiResponseTooLargeError,
  ApiUnavailableError,
} from '../../src/api/errors.js';
import type { ApiClient, ApiObserver, PagePath } from '../../src/api/types.js';
import { ConfigError } from '../../src/errors.js';
import { Capture, failure, logsPage, sendJson, startServer, TOKEN, type Handler, type TestServer } from './helpers.js';

const ENTRY = { time: '2024-05-01T12:00:00.123456789Z', log: 'hello', stream: 'stdout' };
const REQ = { modelId: 'm-1', fromMs: Date.UTC(2024, 4, 1, 12), toMs: Date.UTC(2024, 4, 1, 12, 5) };

let servers: TestServer[] = [];
let clients: ApiClient[] = [];

afterEach(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
  clients = [];
});

async function serve(handler: Handler): Promise<TestServer> {
  const s = await startServer(handler);
  servers.push(s);
  return s;
}

/** One attempt only: the first backoff already ends past the deadline. */
const ONE_ATTEMPT: Partial<ApiClientOptions> = { retry: { deadlineMs: 2000, baseDelayMs: 10_000, maxDelayMs: 10_000 }, random: () => 0.99 };

function client(baseUrl: string, extra: Partial<ApiClientOptions> = {}): ApiClient {
  const c = createApiClient({
    baseUrl,
    token: TOKEN,
    timeouts: { connectMs: 1000, headersMs: 2000, bodyMs: 2000 },
    retry: { deadlineMs: 3000, baseDelayMs: 10, maxDelayMs: 50 },
    ...extra,
  });
  clients.push(c);
  return c;
}


async function waitUntil(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

function expectNoToken(err: unknown, ...more: string[]): void {
  const texts = [String(err), (err as Error).message, JSON.stringify(err), (err as Error).stack ?? '', ...more];
  for (let cur = (err as { cause?: unknown }).cause; cur instanceof Error; cur = (cur as { cause?: unknown }).cause) texts.push(cur.message);
  for (const t of texts) expect(t).not.toContain(TOKEN);
}

describe('request wire format', () => {
  it.each([
    ['', '/rest/model/logs/get/'],
    ['/', '/rest/model/logs/get/'],
    ['/prefix', '/prefix/rest/model/logs/get/'],
    ['/prefix/', '/prefix/rest/model/logs/get/'],
    ['/a/b/', '/a/b/rest/model/logs/get/'],
  ])('posts the logs request to base%s at %s', async (suffix, path) => {
    const s = await serve((_req, res) => sendJson(res, 200, logsPage([ENTRY])));
    await client(s.url + suffix).getLogs(REQ);
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0]!.method).toBe('POST');
    expect(s.requests[0]!.url).toBe(path);
  });

  it('sends the token raw by default, JSON content type, and exactly the spec fields', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, logsPage([])));
    await client(s.url).getLogs(REQ);
    const r = s.requests[0]!;
    expect(r.headers.authorization).toBe(TOKEN);
    expect(r.headers['content-type']).toBe('application/json');
    expect(JSON.parse(r.body)).toEqual({ model_id: 'm-1', time_from: '2024-05-01T12:00:00.000Z', time_to: '2024-05-01T12:05:00.000Z' });
  });

  it('sends "Bearer <token>" with the bearer scheme', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, logsPage([])));
    await client(s.url, { authScheme: 'bearer' }).getLogs(REQ);
    expect(s.requests[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('sends is_less_logs and next_token only when set, and times with three digits', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, logsPage([])));
    const c = client(s.url);
    await c.getLogs({ modelId: 'm', fromMs: 1714564800007, toMs: 1714564800999.6, isLessLogs: false, nextToken: 'abc' });
    await c.getLogs({ modelId: 'm', fromMs: 0, toMs: 1, isLessLogs: true });
    expect(JSON.parse(s.requests[0]!.body)).toEqual({
      model_id: 'm',
      time_from: '2024-05-01T12:00:00.007Z',
      time_to: '2024-05-01T12:00:00.999Z',
      is_less_logs: false,
      next_token: 'abc',
    });
    expect(Object.keys(JSON.parse(s.requests[1]!.body))).toEqual(['model_id', 'time_from', 'time_to', 'is_less_logs']);
  });

  it('posts a settings update with model_id and data only', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, { status: 'success', details: 'Model updated.' }));
    const result = await client(`${s.url}/p/`).updateSettings('m-2', { min_replica: 1, is_dedicated: false });
    expect(result).toEqual({ details: 'Model updated.' });
    const r = s.requests[0]!;
    expect(r.url).toBe('/p/rest/model/settings/update/');
    expect(r.headers.authorization).toBe(TOKEN);
    expect(JSON.parse(r.body)).toEqual({ model_id: 'm-2', data: { min_replica: 1, is_dedicated: false } });
  });

  it('keeps the connection alive between requests', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, logsPage([])));
    const c = client(s.url);
    for (let i = 0; i < 6; i++) await c.getLogs(REQ);
    // The pool may open a second connection while the first settles; it reuses both.
    expect(new Set(s.requests.map((r) => r.connection)).size).toBeLessThanOrEqual(2);
  });
});

describe('paging', () => {
  it.each([
    ['absent', undefined],
    ['null', null],
    ['empty', ''],
  ])('reads every page up to the end signalled by a %s next_token', async (_name, end) => {
    const s = await serve((req, res) => {
      const token = (JSON.parse(req.body) as { next_token?: string }).next_token;
      const n = token === undefined ? 0 : Number(token.slice(1));
      if (n < 2) sendJson(res, 200, logsPage([{ ...ENTRY, log: `line ${n}` }], `t${n + 1}`));
      else sendJson(res, 200, logsPage([{ ...ENTRY, log: `line ${n}` }], end));
    });
    const c = client(s.url);
    const lines: string[] = [];
    let token: string | undefined;
    do {
      const page = await c.getLogs({ ...REQ, ...(token !== undefined ? { nextToken: token } : {}) });
      lines.push(...page.entries.map((e) => e.log));
      expect(page.httpStatus).toBe(200);
      expect(page.bytes).toBeGreaterThan(0);
      token = page.nextToken;
    } while (token !== undefined);
    expect(lines).toEqual(['line 0', 'line 1', 'line 2']);
    expect(s.requests).toHaveLength(3);
  });

  it('returns the entries unchanged, extra fields dropped', async () => {
    const weird = { time: '2024-05-01T12:00:00Z', log: 'multi\nline ünïcode 🎉', stream: 'stderr', extra: 1 };
    const s = await serve((_req, res) => sendJson(res, 200, { ...logsPage([weird, { ...ENTRY, log: '' }]), extra: true }));
    const page = await client(s.url).getLogs(REQ);
    expect(page.entries).toEqual([{ time: weird.time, log: weird.log, stream: 'stderr' }, { ...ENTRY, log: '' }]);
    expect(page.path).toBe('kernel');
    expect(page.count).toBe(2);
  });

  it('reads a body the scanner leaves to JSON.parse (a key given twice) with the same result', async () => {
    const body = `{"status":"success","details":[{"time":"${ENTRY.time}","log":"first","log":"second","stream":"stdout"}],"next_token":"t1"}`;
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    const page = await client(s.url).getLogs(REQ);
    expect(page.path).toBe('json');
    expect(page.entries).toEqual([{ time: ENTRY.time, log: 'second', stream: 'stdout' }]);
    expect(page.nextToken).toBe('t1');
  });
});

describe('page readers', () => {
  /** A valid page the scanners leave to JSON.parse: a key given twice. */
  const DUPLICATE_KEY = `{"status":"success","details":[{"time":"${ENTRY.time}","log":"first","log":"second","stream":"stdout"}]}`;

  /** Serves a plain page, then a page with a key given twice, then an HTML page. */
  function threeBodies(): Promise<TestServer> {
    return serve((_req, res, i) => {
      if (i === 0) return sendJson(res, 200, logsPage([ENTRY], 't1'));
      res.writeHead(200, { 'content-type': i === 1 ? 'application/json' : 'text/html' });
      res.end(i === 1 ? DUPLICATE_KEY : '<html>maintenance</html>');
    });
  }

  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it.each(['kernel', 'javascript', 'json'] as const)('tells the observer which reader read each page, starting at %s; a refused body is no page', async (first) => {
    const s = await threeBodies();
    const pages: Array<{ modelId: string; path: PagePath }> = [];
    const c = client(s.url, { ...ONE_ATTEMPT, pageParser: first, observer: { onPage: (p) => pages.push(p) } });
    expect((await c.getLogs(REQ)).path).toBe(first);
    expect((await c.getLogs(REQ)).path).toBe('json');
    await expect(c.getLogs(REQ)).rejects.toBeInstanceOf(ApiProtocolError);
    expect(pages).toEqual([
      { modelId: 'm-1', path: first },
      { modelId: 'm-1', path: 'json' },
    ]);
  });

  it('starts at the reader MLS_PAGE_PARSER names when no option does', async () => {
    vi.stubEnv('MLS_PAGE_PARSER', 'javascript');
    const s = await serve((_req, res) => sendJson(res, 200, logsPage([ENTRY])));
    expect((await client(s.url).getLogs(REQ)).path).toBe('javascript');
    expect((await client(s.url, { pageParser: 'kernel' }).getLogs(REQ)).path).toBe('kernel');
  });

  it('refuses an MLS_PAGE_PARSER it does not know, as a configuration error', () => {
    vi.stubEnv('MLS_PAGE_PARSER', 'simd');
    expect(() => client('http://127.0.0.1:9')).toThrow(ConfigError);
    expect(() => client('http://127.0.0.1:9')).toThrow(/MLS_PAGE_PARSER must be one of kernel, javascript, json/);
  });
});

describe('response bodies from the pool', () => {
  /** A pool that remembers the buffer of every body given back to it, last one last. */
  class RecordingPool extends BodyPool {
    readonly given: ArrayBufferLike[] = [];
    override give(view: Uint8Array): void {
      this.given.push(view.buffer);
      super.give(view);
    }
  }

  /** Pages `n` = 0, 1, … with `size` entries whose logs name the page; chunked (no Content-Length) when asked. */
  function pagedServer(size: number, chunked: boolean): Promise<TestServer> {
    return serve((req, res) => {
      const token = (JSON.parse(req.body) as { next_token?: string }).next_token;
      const n = token === undefined ? 0 : Number(token.slice(1));
      const entries = Array.from({ length: size }, (_, i) => ({ ...ENTRY, log: `page ${n} line ${i} ${'z'.repeat(i % 50)}` }));
      const text = JSON.stringify(logsPage(entries, `t${n + 1}`));
      if (!chunked) return sendJson(res, 200, text);
      res.writeHead(200, { 'content-type': 'application/json' });
      // In pieces, so that the body outgrows the first buffer it is given.
      for (let at = 0; at < text.length; at += 7_000) res.write(text.slice(at, at + 7_000));
      res.end();
    });
  }
  const expected = (n: number, size: number) => Array.from({ length: size }, (_, i) => `page ${n} line ${i} ${'z'.repeat(i % 50)}`);

  it.each([
    ['with a Content-Length', false],
    ['chunked, larger than its first buffer', true],
  ])('reuses a released page\'s buffer for the next one, %s, each page read whole', async (_name, chunked) => {
    const bodies = new RecordingPool({ minBufferBytes: 4096 });
    const s = await pagedServer(800, chunked);
    const c = client(s.url, { bodies });
    const first = await c.getLogs(REQ);
    const firstLogs = first.entries.map((e) => e.log); // decoded before the release: strings of their own
    const givenBefore = bodies.given.length;
    first.release();
    const firstBuffer = bodies.given.at(-1);
    first.release(); // twice is harmless
    expect(bodies.given).toHaveLength(givenBefore + 1);
    // Chunked, the body moved to larger buffers as it grew; the smaller ones went back too.
    if (chunked) expect(bodies.size).toBeGreaterThan(1);
    else expect(bodies.size).toBe(1);
    const second = await c.getLogs({ ...REQ, nextToken: first.nextToken! });
    expect(second.entries.map((e) => e.log)).toEqual(expected(1, 800));
    second.release();
    expect(bodies.given.at(-1)).toBe(firstBuffer);
    expect(bodies.reused).toBeGreaterThanOrEqual(1);
    expect(firstLogs).toEqual(expected(0, 800));
  });

  it('gives two pages in flight two buffers', async () => {
    const bodies = new RecordingPool({ minBufferBytes: 4096 });
    const s = await pagedServer(300, false);
    const c = client(s.url, { bodies });
    const [a, b] = await Promise.all([c.getLogs(REQ), c.getLogs({ ...REQ, nextToken: 't1' })]);
    a.release();
    const aBuffer = bodies.given.at(-1);
    const third = await c.getLogs({ ...REQ, nextToken: 't2' });
    expect(b.entries.map((e) => e.log)).toEqual(expected(1, 300));
    expect(third.entries.map((e) => e.log)).toEqual(expected(2, 300));
    b.release();
    const bBuffer = bodies.given.at(-1);
    third.release();
    expect(bBuffer).not.toBe(aBuffer);
    expect(bodies.given.at(-1)).not.toBe(bBuffer);
  });

  it('refuses to decode a released page that was never decoded', async () => {
    const s = await pagedServer(5, false);
    const page = await client(s.url).getLogs(REQ);
    page.release();
    expect(() => page.entries).toThrow(/released/);
  });

  it('takes back the buffer of a body it could not use: cut short, malformed, or read by JSON.parse', async () => {
    const bodies = new BodyPool({ minBufferBytes: 4096 });
    const dup = `{"status":"success","details":[{"time":"${ENTRY.time}","log":"first","log":"second","stream":"stdout"}]}`;
    let i = 0;
    const s = await serve((_req, res) => {
      const n = i++;
      if (n === 0) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"status":"success","det');
        setTimeout(() => res.socket?.destroy(), 20);
      } else if (n === 1) sendJson(res, 200, { status: 'success', details: 'nope' });
      else sendJson(res, 200, dup);
    });
    const c = client(s.url, { ...ONE_ATTEMPT, bodies });
    await expect(c.getLogs(REQ)).rejects.toBeInstanceOf(ApiProtocolError);
    expect(bodies.size).toBe(1);
    await expect(c.getLogs(REQ)).rejects.toBeInstanceOf(ApiProtocolError);
    expect(bodies.size).toBe(1);
    const page = await c.getLogs(REQ);
    expect(page.path).toBe('json');
    expect(page.entries).toEqual([{ time: ENTRY.time, log: 'second', stream: 'stdout' }]);
    expect(bodies.size).toBe(1);
    expect(bodies.reused).toBe(2);
  });
});

describe('failures', () => {
  it.each([401, 403])('%d is an auth error, not retried, exit code 3, without the token', async (status) => {
    const s = await serve((_req, res) => sendJson(res, status, { status: 'error', details: `bad token ${TOKEN}` }));
    const err = await failure(client(s.url).getLogs(REQ));
    expect(err).toBeInstanceOf(ApiAuthError);
    expect(err.code).toBe('MLS_ERR_API_AUTH');
    expect(err.exitCode).toBe(3);
    expect(err.retryable).toBe(false);
    expect(err.status).toBe(status);
    expect(err.message).toMatch(/refused the API token/);
    expect(s.requests).toHaveLength(1);
    expectNoToken(err);
  });

  it('400 is a client error carrying the service details, not retried', async () => {
    const s = await serve((_req, res) => sendJson(res, 400, { status: 'error', details: 'invalid next_token' }));
    const err = await failure(client(s.url).getLogs({ ...REQ, nextToken: 'old' }));
    expect(err).toBeInstanceOf(ApiClientError);
    expect(err.code).toBe('MLS_ERR_API_CLIENT');
    expect(err.status).toBe(400);
    expect((err as ApiClientError).details).toBe('invalid next_token');
    expect(err.message).toContain('invalid next_token');
    expect(err.exitCode).toBe(4);
    expect(s.requests).toHaveLength(1);
  });

  it('retries a 500 and returns the next success', async () => {
    const s = await serve((_req, res, i) => (i === 0 ? sendJson(res, 500, { status: 'error' }) : sendJson(res, 200, logsPage([ENTRY]))));
    const page = await client(s.url).getLogs(REQ);
    expect(page.entries).toHaveLength(1);
    expect(s.requests).toHaveLength(2);
  });

  it('honours Retry-After in seconds on a 503', async () => {
    const s = await serve((_req, res, i) => (i === 0 ? sendJson(res, 503, 'down', { 'retry-after': '1' }) : sendJson(res, 200, logsPage([]))));
    const started = performance.now();
    await client(s.url).getLogs(REQ);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(s.requests).toHaveLength(2);
  });

  it('honours Retry-After as an HTTP date on a 429', async () => {
    const s = await serve((_req, res, i) => {
      // HTTP dates have whole seconds: two seconds ahead is at least one second of wait.
      const at = new Date(Date.now() + 2000).toUTCString();
      if (i === 0) sendJson(res, 429, { status: 'error', details: 'slow down' }, { 'retry-after': at });
      else sendJson(res, 200, logsPage([]));
    });
    const started = performance.now();
    await client(s.url, { retry: { deadlineMs: 5000, baseDelayMs: 10, maxDelayMs: 50 } }).getLogs(REQ);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(s.requests).toHaveLength(2);
  });

  it('gives up at once when Retry-After is beyond the deadline, telling how long to wait', async () => {
    const s = await serve((_req, res) => sendJson(res, 503, 'down', { 'retry-after': '120' }));
    const started = performance.now();
    const err = await failure(client(s.url).getLogs(REQ));
    expect(performance.now() - started).toBeLessThan(1000);
    expect(err).toBeInstanceOf(ApiUnavailableError);
    expect((err as ApiUnavailableError).retryAfterMs).toBe(120_000);
    expect(err.status).toBe(503);
    expect(s.requests).toHaveLength(1);
  });

  it('treats an HTML page with 200 as a protocol error, retried, with a scrubbed excerpt', async () => {
    const html = `<!DOCTYPE html><html><body><h1>Gateway</h1><p>Authorization: ${TOKEN}</p>${'x'.repeat(500)}</body></html>`;
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(html);
    });
    const err = await failure(client(s.url, { retry: { deadlineMs: 1000, baseDelayMs: 10, maxDelayMs: 20 } }).getLogs(REQ));
    expect(err).toBeInstanceOf(ApiProtocolError);
    expect(err.code).toBe('MLS_ERR_API_PROTOCOL');
    expect(err.retryable).toBe(true);
    expect(err.status).toBe(200);
    expect(err.message).toMatch(/HTML/);
    const excerpt = (err as ApiProtocolError).excerpt;
    expect(excerpt).toMatch(/^<!DOCTYPE html>/);
    expect(excerpt.length).toBeLessThanOrEqual(200);
    expect(s.requests.length).toBeGreaterThan(1);
    expectNoToken(err, excerpt);
  });

  it('treats a body cut short as a protocol error', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"status":"success","det');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const err = await failure(client(s.url, ONE_ATTEMPT).getLogs(REQ));
    expect(err).toBeInstanceOf(ApiProtocolError);
    expect(err.message).toMatch(/cut short/);
    expect(err.status).toBe(200);
  });

  it.each([
    ['details that is not an array', { status: 'success', details: 'nope' }, /details/],
    ['an entry without a time', { status: 'success', details: [{ log: 'x', stream: 'stdout' }] }, /time/],
    ['a numeric next_token', { status: 'success', details: [], next_token: 5 }, /next_token/],
    ['status other than success', { status: 'error', details: [] }, /status "error"/],
    ['a JSON array', [], /not a JSON object/],
  ])('treats %s as a protocol error', async (_name, body, message) => {
    const s = await serve((_req, res) => sendJson(res, 200, body));
    const err = await failure(client(s.url, ONE_ATTEMPT).getLogs(REQ));
    expect(err).toBeInstanceOf(ApiProtocolError);
    expect(err.message).toMatch(message);
  });

  it('refuses a response whose Content-Length is over the limit', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, logsPage([{ ...ENTRY, log: 'x'.repeat(5000) }])));
    const err = await failure(client(s.url, { maxResponseBytes: 1024 }).getLogs(REQ));
    expect(err).toBeInstanceOf(ApiResponseTooLargeError);
    expect(err.code).toBe('MLS_ERR_API_TOO_LARGE');
    // The same request would get the same answer: not retried.
    expect(err.retryable).toBe(false);
    expect(s.requests).toHaveLength(1);
    expect(err.message).toMatch(/the response \(5\d{3} bytes\) is larger than api\.max_response_bytes \(1024 bytes\)/);
  });

  it('takes a new response size limit for the requests that follow', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, logsPage([{ ...ENTRY, log: 'x'.repeat(5000) }])));
    const c = client(s.url, { ...ONE_ATTEMPT, maxResponseBytes: 1024 });
    expect(await failure(c.getLogs(REQ))).toBeInstanceOf(ApiResponseTooLargeError);
    c.setMaxResponseBytes!(64 * 1024);
    expect((await c.getLogs(REQ)).entries).toHaveLength(1);
  });

  it('stops reading a streamed response as soon as it passes the limit', async () => {
    let written = 0;
    let serverSawClose = false;
    const total = 200;
    const s = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.on('close', () => {
        serverSawClose = true;
      });
      res.write('{"status":"success","details":[');
      for (let i = 0; i < total && !res.destroyed; i++) {
        res.write(`${i ? ',' : ''}${JSON.stringify({ ...ENTRY, log: 'y'.repeat(1000) })}`);
        written++;
        await new Promise((r) => setTimeout(r, 2));
      }
      if (!res.destroyed) res.end(']}');
    });
    const err = await failure(client(s.url, { ...ONE_ATTEMPT, maxResponseBytes: 10_000 }).getLogs(REQ));
    expect(err).toBeInstanceOf(ApiResponseTooLargeError);
    await new Promise((r) => setTimeout(r, 50));
    expect(serverSawClose).toBe(true);
    expect(written).toBeLessThan(total / 2);
  });

  it('retries 5xx until the deadline, then throws the last error', async () => {
    const s = await serve((_req, res) => sendJson(res, 502, { status: 'error', details: 'bad gateway' }));
    const started = performance.now();
    const err = await failure(client(s.url, { retry: { deadlineMs: 400, baseDelayMs: 20, maxDelayMs: 80 } }).getLogs(REQ));
    const elapsed = performance.now() - started;
    expect(err).toBeInstanceOf(ApiUnavailableError);
    expect(err.status).toBe(502);
    expect(err.message).toContain('bad gateway');
    expect(elapsed).toBeLessThan(2000);
    expect(s.requests.length).toBeGreaterThan(2);
  });

  it('cuts a hanging request at the deadline', async () => {
    const s = await serve(() => {
      // never answers
    });
    const started = performance.now();
    const err = await failure(client(s.url, { retry: { deadlineMs: 300, baseDelayMs: 10, maxDelayMs: 20 }, timeouts: { headersMs: 10_000 } }).getLogs(REQ));
    const elapsed = performance.now() - started;
    expect(err).toBeInstanceOf(ApiUnavailableError);
    expect(err.message).toMatch(/deadline/);
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(1500);
  });

  it('retries a headers timeout', async () => {
    const s = await serve((_req, res, i) => {
      if (i > 0) sendJson(res, 200, logsPage([ENTRY]));
    });
    const page = await client(s.url, { timeouts: { headersMs: 100 }, retry: { deadlineMs: 3000, baseDelayMs: 10, maxDelayMs: 20 } }).getLogs(REQ);
    expect(page.entries).toHaveLength(1);
    expect(s.requests).toHaveLength(2);
  });

  it('reports a refused connection as unavailable after retrying', async () => {
    const s = await serve(() => {});
    const url = s.url;
    await s.close();
    servers = [];
    const err = await failure(client(url, { retry: { deadlineMs: 1000, baseDelayMs: 10, maxDelayMs: 20 } }).getLogs(REQ));
    expect(err).toBeInstanceOf(ApiUnavailableError);
    expect(err.message).toMatch(/connection refused/);
  });

  it('retries a connection reset', async () => {
    const s = await serve((_req, res, i) => {
      if (i === 0) res.socket?.destroy();
      else sendJson(res, 200, logsPage([ENTRY]));
    });
    const page = await client(s.url).getLogs(REQ);
    expect(page.entries).toHaveLength(1);
  });

  it('stops at once when the caller aborts', async () => {
    const s = await serve(() => {});
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop')), 50);
    const started = performance.now();
    await expect(client(s.url).getLogs(REQ, controller.signal)).rejects.toThrow('stop');
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('stops at once when the caller aborts while the body is arriving', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"logs":[');
    });
    const controller = new AbortController();
    const c = client(s.url, { retry: { deadlineMs: 60_000 }, timeouts: { bodyMs: 60_000 } });
    const pending = c.getLogs(REQ, controller.signal);
    await waitUntil(() => s.requests.length === 1);
    setTimeout(() => controller.abort(new Error('stop')), 50);
    const started = performance.now();
    await expect(pending).rejects.toThrow('stop');
    expect(performance.now() - started).toBeLessThan(1000);
    expect(s.requests).toHaveLength(1);
  });

  it('an abort ends the wait for Retry-After at once, and is not counted as an attempt', async () => {
    const s = await serve((_req, res) => sendJson(res, 503, { status: 'error', details: 'busy' }, { 'retry-after': '10' }));
    const attempts: string[] = [];
    const controller = new AbortController();
    const c = client(s.url, { retry: { deadlineMs: 60_000 }, observer: { onAttempt: (a) => attempts.push(String(a.status)), onRetry: () => setTimeout(() => controller.abort(new Error('stop')), 50) } });
    const started = performance.now();
    await expect(c.getLogs(REQ, controller.signal)).rejects.toThrow('stop');
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(s.requests).toHaveLength(1);
    expect(attempts).toEqual(['503']);
  });

  it('an abort ends at once a request still waiting for a connection, without reporting a failed attempt', async () => {
    const s = await serve(() => {}); // never answers: the one connection stays busy
    const attempts: string[] = [];
    const c = client(s.url, { connections: 1, retry: { deadlineMs: 60_000 }, timeouts: { headersMs: 60_000 }, observer: { onAttempt: (a) => attempts.push(String(a.status)) } });
    const busy = new AbortController();
    const first = c.getLogs(REQ, busy.signal).catch((err: unknown) => err);
    await waitUntil(() => s.requests.length === 1);
    const queued = new AbortController();
    const second = c.getLogs(REQ, queued.signal);
    setTimeout(() => queued.abort(new Error('stop')), 50);
    const waited = new Promise((r) => setTimeout(() => r('still waiting for the connection'), 5_000));
    try {
      await expect(Promise.race([second, waited])).rejects.toThrow('stop');
    } finally {
      busy.abort(new Error('done'));
    }
    expect(await first).toHaveProperty('message', 'done');
    expect(attempts).toEqual([]);
  });

  it('keeps the token out of every error and log line', async () => {
    const lines = new Capture();
    const logger = pino({ level: 'debug' }, lines);
    let mode = 'retry';
    const s = await serve((req, res, i) => {
      const echo = `token was ${String(req.headers.authorization)}`;
      if (mode === 'retry') sendJson(res, i % 2 ? 200 : 500, i % 2 ? logsPage([]) : { status: 'error', details: echo });
      else if (mode === 'html') sendJson(res, 200, `<html>${echo}</html>`);
      else if (mode === 'details') sendJson(res, 400, { status: 'error', details: echo });
      else sendJson(res, 401, echo);
    });
    await client(s.url, { logger, authScheme: 'bearer' }).getLogs(REQ);
    const c = client(s.url, { ...ONE_ATTEMPT, logger, authScheme: 'bearer' });
    const errs: ApiError[] = [];
    for (const m of ['html', 'details', 'auth']) {
      mode = m;
      errs.push(await failure(c.getLogs(REQ)));
    }
    expect(errs.map((e) => e.constructor)).toEqual([ApiProtocolError, ApiClientError, ApiAuthError]);
    expect((errs[0] as ApiProtocolError).excerpt).toContain('[REDACTED]');
    expect((errs[1] as ApiClientError).details).toContain('[REDACTED]');
    for (const e of errs) expectNoToken(e, (e as ApiProtocolError).excerpt ?? '', (e as ApiClientError).details ?? '');
    expect(lines.text).toContain('retrying');
    expect(lines.text).not.toContain(TOKEN);
  });
});

describe('observer and lifecycle', () => {
  it('reports every attempt and every retry', async () => {
    const attempts: unknown[] = [];
    const retries: unknown[] = [];
    const observer: ApiObserver = { onAttempt: (i) => attempts.push(i), onRetry: (i) => retries.push(i) };
    const s = await serve((_req, res, i) => (i === 0 ? sendJson(res, 500, {}) : sendJson(res, 200, logsPage([]))));
    await client(s.url, { observer }).getLogs(REQ);
    expect(attempts).toMatchObject([
      { operation: 'logs', modelId: 'm-1', status: 500, errorCode: 'MLS_ERR_API_UNAVAILABLE' },
      { operation: 'logs', modelId: 'm-1', status: 200 },
    ]);
    expect(retries).toMatchObject([{ operation: 'logs', modelId: 'm-1', attempt: 1, errorCode: 'MLS_ERR_API_UNAVAILABLE' }]);
  });

  it('closes idempotently', async () => {
    const c = createApiClient({ baseUrl: 'http://127.0.0.1:1', token: TOKEN });
    const a = c.close();
    expect(c.close()).toBe(a);
    await a;
  });

  it.each([
    ['ftp://host/', /http/],
    ['not a url', /valid URL/],
    ['http://user:pw@host/', /credentials/],
  ])('refuses the base URL %s', (baseUrl, message) => {
    expect(() => createApiClient({ baseUrl, token: TOKEN })).toThrow(message);
  });

  it('refuses an empty token or one with a line break, without echoing it', () => {
    expect(() => createApiClient({ baseUrl: 'http://h/', token: ' ' })).toThrow(/empty/);
    try {
      createApiClient({ baseUrl: 'http://h/', token: `${TOKEN}\n` });
      expect.unreachable();
    } catch (err) {
      expect(String(err)).not.toContain(TOKEN);
    }
  });
});
