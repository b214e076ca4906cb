import { describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import type { ApiObserver } from '../../src/api/types.js';
import { logsPage, sendJson, TOKEN } from './helpers.js';
import { client, closeAfterEach, ENTRY, REQ, serve } from './client-fixture.js';

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
    expect(page.count).toBe(2);
  });

  it('reads a body the scanner leaves to JSON.parse (a key given twice) with the same result', async () => {
    const body = `{"status":"success","details":[{"time":"${ENTRY.time}","log":"first","log":"second","stream":"stdout"}],"next_token":"t1"}`;
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    const page = await client(s.url).getLogs(REQ);
    expect(page.entries).toEqual([{ time: ENTRY.time, log: 'second', stream: 'stdout' }]);
    expect(page.nextToken).toBe('t1');
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
