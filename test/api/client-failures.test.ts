import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import {
  ApiAuthError,
  ApiClientError,
  ApiError,
  ApiProtocolError,
  ApiResponseTooLargeError,
  ApiUnavailableError,
} from '../../src/api/errors.js';
import { Capture, failure, logsPage, sendJson, startServer, TOKEN } from './helpers.js';
import { client, closeAfterEach, ENTRY, expectNoToken, ONE_ATTEMPT, REQ, serve, waitUntil } from './client-fixture.js';

closeAfterEach();

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
    ['a numeric next_token', { status: 'success', details: [], next_token: 5 }, /next_token/],
    ['status other than success', { status: 'error', details: [] }, /status "error"/],
    ['a JSON array', [], /not a JSON object/],
  ])('treats %s as a protocol error', async (_name, body, message) => {
    const s = await serve((_req, res) => sendJson(res, 200, body));
    const err = await failure(client(s.url, ONE_ATTEMPT).getLogs(REQ));
    expect(err).toBeInstanceOf(ApiProtocolError);
    expect(err.message).toMatch(message);
  });

  it('keeps an entry without a time, off the spec, instead of failing its page', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, { status: 'success', details: [{ log: 'x', stream: 'stdout' }, ENTRY] }));
    const page = await client(s.url, ONE_ATTEMPT).getLogs(REQ);
    expect(page.entries).toEqual([{ time: '', log: 'x', stream: 'stdout' }, ENTRY]);
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
    // Not through serve(): closed here already.
    const s = await startServer(() => {});
    const url = s.url;
    await s.close();
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

  it('warns of one retry in 30 s and says the others at debug level', async () => {
    const lines = new Capture();
    const logger = pino({ level: 'debug' }, lines);
    // every call fails twice with 503, then succeeds
    const s = await serve((_req, res, i) => sendJson(res, i % 3 === 2 ? 200 : 503, i % 3 === 2 ? logsPage([]) : { status: 'error' }));
    const c = client(s.url, { logger });
    for (let n = 0; n < 3; n++) await c.getLogs(REQ);
    const said = lines.text
      .split('\n')
      .filter((l) => l.includes('request to the service failed; retrying'))
      .map((l) => (JSON.parse(l) as { level: number }).level);
    expect(said).toEqual([40, 20, 20, 20, 20, 20]);
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

