import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { BodyPool } from '../../src/api/body-pool.js';
import { ApiProtocolError } from '../../src/api/errors.js';
import type { ApiObserver, PagePath } from '../../src/api/types.js';
import { ConfigError } from '../../src/errors.js';
import { logsPage, sendJson, TOKEN, type TestServer } from './helpers.js';
import { client, closeAfterEach, ENTRY, ONE_ATTEMPT, REQ, serve } from './client-fixture.js';

closeAfterEach();

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
