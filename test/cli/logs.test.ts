import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { register } from '../../src/cli/logs.js';
import { logsPage, sendJson, startServer, TOKEN, type Handler, type TestServer } from '../api/helpers.js';
import { runCli, SlowStream } from './run-in-process.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(handler: Handler): Promise<TestServer> {
  server = await startServer(handler);
  return server;
}

function env(s: TestServer): NodeJS.ProcessEnv {
  return { MLS_API_URL: s.url, MLS_API_TOKEN: TOKEN };
}

function tokenOf(body: string): string | undefined {
  return (JSON.parse(body) as { next_token?: string }).next_token;
}

const FROM = ['--from', '2024-05-01T12:00:00.0005Z', '--to', '2024-05-01T12:05:00.0001Z'];
const e = (time: string, log: string, stream = 'stdout') => ({ time, log, stream });

describe('mls logs (one window)', () => {
  it('pages to the end and prints NDJSON with the service time unchanged', async () => {
    const pages = [
      logsPage([e('2024-05-01T12:00:01.123456789Z', 'first'), e('2024-05-01T12:00:02Z', 'multi\nline ünï 🎉', 'stderr')], 'p2'),
      logsPage([], 'p3'),
      logsPage([e('2024-05-01T12:00:03.5Z', '')], ''),
    ];
    const s = await serve((req, res) => {
      const t = tokenOf(req.body);
      sendJson(res, 200, pages[t === undefined ? 0 : Number(t.slice(1)) - 1]);
    });
    const r = await runCli(register, ['logs', '--model', 'm-1', ...FROM], env(s));
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l))).toEqual([
      { model_id: 'm-1', time: '2024-05-01T12:00:01.123456789Z', stream: 'stdout', log: 'first' },
      { model_id: 'm-1', time: '2024-05-01T12:00:02Z', stream: 'stderr', log: 'multi\nline ünï 🎉' },
      { model_id: 'm-1', time: '2024-05-01T12:00:03.5Z', stream: 'stdout', log: '' },
    ]);
    expect(s.requests.map((q) => tokenOf(q.body))).toEqual([undefined, 'p2', 'p3']);
    // --from rounds down and --to up to the millisecond, so the window keeps its edges.
    expect(JSON.parse(s.requests[0]!.body)).toEqual({ model_id: 'm-1', time_from: '2024-05-01T12:00:00.000Z', time_to: '2024-05-01T12:05:00.001Z' });
  });

  it('prints text lines and asks for fewer logs with --less-logs', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, logsPage([e('2024-05-01T12:00:01Z', 'hello', 'stderr')])));
    const r = await runCli(register, ['logs', '--model', 'm', ...FROM, '--output', 'text', '--less-logs'], env(s));
    expect(r.stdout).toBe('2024-05-01T12:00:01Z stderr hello\n');
    expect(JSON.parse(s.requests[0]!.body).is_less_logs).toBe(true);
  });

  it('uses --since as a window ending now', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, logsPage([])));
    const before = Date.now();
    await runCli(register, ['logs', '--model', 'm', '--since', '1h'], env(s));
    const body = JSON.parse(s.requests[0]!.body) as { time_from: string; time_to: string };
    const span = Date.parse(body.time_to) - Date.parse(body.time_from);
    expect(span).toBe(3_600_000);
    expect(Date.parse(body.time_to)).toBeGreaterThanOrEqual(before - 1);
  });

  it('restarts the window when the service rejects the continuation token, printing nothing twice', async () => {
    const a = e('2024-05-01T12:00:01Z', 'a');
    const b = e('2024-05-01T12:00:02Z', 'b');
    const c = e('2024-05-01T12:00:03Z', 'c');
    let rejected = false;
    const s = await serve((req, res) => {
      const t = tokenOf(req.body);
      if (t === undefined) sendJson(res, 200, logsPage([a, b], 'p2'));
      else if (t === 'p2' && !rejected) {
        rejected = true;
        sendJson(res, 400, { status: 'error', details: 'next_token expired' });
      } else sendJson(res, 200, logsPage([b, c]));
    });
    const r = await runCli(register, ['logs', '--model', 'm', ...FROM, '--output', 'text'], env(s));
    expect(r.exitCode).toBe(0);
    // b appears twice in the window (once per page), so it is printed twice; a once.
    expect(r.stdout.split('\n').filter(Boolean).map((l) => l.split(' ')[2])).toEqual(['a', 'b', 'b', 'c']);
    expect(r.stderr).toMatch(/rejected the continuation token/);
    expect(s.requests).toHaveLength(4);
  });

  it('ends on a token repeated with an empty page', async () => {
    const s = await serve((req, res) => sendJson(res, 200, logsPage(tokenOf(req.body) ? [] : [e('2024-05-01T12:00:01Z', 'x')], 'same')));
    const r = await runCli(register, ['logs', '--model', 'm', ...FROM], env(s));
    expect(r.exitCode).toBe(0);
    expect(s.requests).toHaveLength(2);
  });

  it('ends a window whose next_token cycles (A → B → A) with a warning, printing each page once', async () => {
    const pages: Record<string, { log: string; next: string }> = { '': { log: 'first', next: 'A' }, A: { log: 'second', next: 'B' }, B: { log: 'third', next: 'A' } };
    const s = await serve((req, res) => {
      const p = pages[tokenOf(req.body) ?? '']!;
      sendJson(res, 200, logsPage([e(`2024-05-01T12:00:0${Object.keys(pages).indexOf(tokenOf(req.body) ?? '') + 1}Z`, p.log)], p.next));
    });
    const r = await runCli(register, ['logs', '--model', 'm', ...FROM, '--output', 'text'], env(s));
    expect(r.exitCode).toBe(0);
    expect(r.stdout.split('\n').filter(Boolean).map((l) => l.split(' ')[2])).toEqual(['first', 'second', 'third']);
    expect(s.requests).toHaveLength(3);
    expect(r.stderr).toMatch(/came back to one already followed in this window \(a cycle of 2 pages\)/);
  });

  it('with --process prints what the daemon would ship: a traceback split across pages as one record, levels from the text', async () => {
    const t = (s: number) => `2024-05-01T12:00:${String(s).padStart(2, '0')}.000Z`;
    const pages = [
      logsPage([e(t(1), 'INFO:     127.0.0.1:5000 - "POST /predict HTTP/1.1" 200 OK', 'stderr'), e(t(2), 'Traceback (most recent call last):', 'stderr'), e(t(2), '  File "/app/m.py", line 3, in f', 'stderr')], 'p2'),
      logsPage([e(t(2), 'ValueError: bad input', 'stderr'), e(t(3), 'a plain print()', 'stdout')], ''),
    ];
    const s = await serve((req, res) => sendJson(res, 200, pages[tokenOf(req.body) === undefined ? 0 : 1]));
    const r = await runCli(register, ['logs', '--model', 'm', ...FROM, '--process'], env(s));
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l))).toEqual([
      { model_id: 'm', time: t(1), stream: 'stderr', log: 'INFO:     127.0.0.1:5000 - "POST /predict HTTP/1.1" 200 OK', level: 'info' },
      // The traceback is held until nothing more can join it: here, the end of the window.
      { model_id: 'm', time: t(3), stream: 'stdout', log: 'a plain print()' },
      { model_id: 'm', time: t(2), stream: 'stderr', log: 'Traceback (most recent call last):\n  File "/app/m.py", line 3, in f\nValueError: bad input', level: 'error', lines: 3, time_end: t(2), exception: { type: 'ValueError', message: 'bad input' } },
    ]);
    const text = await runCli(register, ['logs', '--model', 'm', ...FROM, '--process', '--output', 'text'], env(s));
    expect(text.stdout).toContain(`${t(2)} stderr ERROR Traceback (most recent call last):\n  File`);
  });

  it('prints an off-spec entry with its values as text instead of failing, raw and with --process', async () => {
    const details = [e('2024-05-01T12:00:01Z', 'before'), { time: '2024-05-01T12:00:02Z', log: null, stream: 'stdout' }, { time: 'noon', log: 'no time', stream: 'stderr' }, [1, 2], e('2024-05-01T12:00:03Z', 'after')];
    const s = await serve((_req, res) => sendJson(res, 200, { status: 'success', details }));
    const lines = (stdout: string) => stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { time: string; stream: string; log: string });
    const raw = await runCli(register, ['logs', '--model', 'm', ...FROM], env(s));
    expect(raw.stderr).toBe('');
    expect(raw.exitCode).toBe(0);
    expect(lines(raw.stdout)).toEqual([
      { model_id: 'm', time: '2024-05-01T12:00:01Z', stream: 'stdout', log: 'before' },
      { model_id: 'm', time: '2024-05-01T12:00:02Z', stream: 'stdout', log: 'null' },
      { model_id: 'm', time: 'noon', stream: 'stderr', log: 'no time' },
      { model_id: 'm', time: '', stream: '', log: '[1,2]' },
      { model_id: 'm', time: '2024-05-01T12:00:03Z', stream: 'stdout', log: 'after' },
    ]);
    const processed = await runCli(register, ['logs', '--model', 'm', ...FROM, '--process'], env(s));
    expect(processed.exitCode).toBe(0);
    expect(lines(processed.stdout).map((r) => r.log).sort()).toEqual(['[1,2]', 'after', 'before', 'no time', 'null']);
  });

  it('with --process prints the lines that once stopped processing: JSON 10,000 deep as text, a 6 MB run, lone surrogates', async () => {
    const t = (s: number) => `2024-05-01T12:00:${String(s).padStart(2, '0')}.000Z`;
    const hostile = ['{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000), 'token sk-' + 'Ab3Xy9Qz'.repeat(786_432), 'a'.repeat(48) + '!', 'cut \ud83d', '{"event": "cut \ud83d", "ratio": 1e400}', 'INFO: after'];
    const s = await serve((_req, res) => sendJson(res, 200, logsPage(hostile.map((log, i) => e(t(i + 1), log)), '')));
    const r = await runCli(register, ['logs', '--model', 'm', ...FROM, '--process'], env(s));
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const records = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { log: string; attributes?: unknown; message?: string });
    expect(records.map((x) => x.log)).toEqual(hostile);
    expect(records[0]!.attributes).toBeUndefined();
    expect(records[4]).toMatchObject({ message: 'cut \ud83d', attributes: { ratio: null } });
  });

  it('waits for the output to drain instead of buffering', async () => {
    const entries = Array.from({ length: 200 }, (_, i) => e(`2024-05-01T12:00:${String(i % 60).padStart(2, '0')}.${i}Z`, `line ${i} ${'z'.repeat(50)}`));
    const s = await serve((req, res) => {
      const t = Number(tokenOf(req.body) ?? 0);
      sendJson(res, 200, logsPage(entries.slice(t * 20, t * 20 + 20), t < 9 ? String(t + 1) : null));
    });
    const out = new SlowStream();
    const r = await runCli(register, ['logs', '--model', 'm', ...FROM, '--output', 'text'], env(s), { stdout: out });
    expect(r.exitCode).toBe(0);
    expect(out.overfilled).toBe(false);
    expect(out.text.split('\n').filter(Boolean)).toHaveLength(200);
  });

  it.each([
    [401, 3, /refused the API token/],
    [403, 3, /refused the API token/],
    [400, 4, /rejected the request \(HTTP 400\): model not found/],
    [500, 4, /failed to answer \(HTTP 500\)/],
  ])('exits with the right code on HTTP %d', async (status, exitCode, message) => {
    const s = await serve((_req, res) => sendJson(res, status, { status: 'error', details: 'model not found' }));
    const r = await runCli(register, ['logs', '--model', 'm', ...FROM, '--timeout', '300ms'], env(s));
    expect(r.exitCode).toBe(exitCode);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toContain(TOKEN);
  });

  it('reads the token from --token-file and sends it with the bearer scheme', async () => {
    const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const dir = await mkdtemp(`${tmpdir()}/mls-`);
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await writeFile(`${dir}/token`, `${TOKEN}\n`);
    const s = await serve((_req, res) => sendJson(res, 200, logsPage([])));
    const r = await runCli(register, ['logs', '--model', 'm', ...FROM, '--api-url', `${s.url}/`, '--token-file', `${dir}/token`, '--auth-scheme', 'bearer'], {});
    expect(r.exitCode).toBe(0);
    expect(s.requests[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it.each([
    [['--token', TOKEN], /a token on the command line shows in `ps`; use MLS_API_TOKEN or --token-file/],
    [['--since', '1h', '--from', '2024-05-01T00:00:00Z'], /--since cannot be combined/],
    [['--since', 'soon'], /--since: expected a positive duration/],
    [['--from', 'yesterday'], /--from: expected a time/],
    [['--from', '2024-05-01T12:00:00'], /--from: expected a time/],
    [['--from', '2024-05-01T12:00:00Z', '--to', '2024-05-01T11:00:00Z'], /--to must be later than --from/],
    [['--to', '2024-05-01T11:00:00Z'], /--to needs --from/],
    [['--follow', '--from', '2024-05-01T12:00:00Z', '--to', '2024-05-01T13:00:00Z'], /--follow has no end/],
    [['--output', 'xml'], /--output: expected ndjson or text/],
    [['--interval', '0s', '--follow'], /--interval/],
    [['--auth-scheme', 'basic'], /--auth-scheme: expected raw or bearer/],
    [['--timeout', 'forever'], /--timeout/],
  ])('refuses %j with exit 2 before any request', async (flags, message) => {
    const s = await serve((_req, res) => sendJson(res, 200, logsPage([])));
    const r = await runCli(register, ['logs', '--model', 'm', ...flags], env(s));
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toContain(TOKEN);
    expect(s.requests).toHaveLength(0);
  });

  it('asks for the URL and the token when they are missing', async () => {
    expect((await runCli(register, ['logs', '--model', 'm'], { MLS_API_TOKEN: TOKEN })).stderr).toMatch(/--api-url or set MLS_API_URL/);
    const r = await runCli(register, ['logs', '--model', 'm'], { MLS_API_URL: 'http://127.0.0.1:1' });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/set MLS_API_TOKEN or pass --token-file/);
  });
});

describe('mls logs --follow', () => {
  it('prints each line once across overlapping polls, twin lines twice, and exits 0 when stopped', async () => {
    const t0 = Date.now();
    const at = (ms: number): string => new Date(t0 + ms).toISOString();
    const a = e(at(1), 'a');
    const b = e(at(2), 'b');
    const c = e(at(3), 'c');
    const controller = new AbortController();
    const s = await serve((_req, res, i) => {
      // The late second copy of b (another replica) and c show up from the third poll on.
      const page = i < 2 ? logsPage([a, b]) : logsPage([a, b, b, c]);
      sendJson(res, 200, page);
      if (i >= 5) controller.abort();
    });
    const r = await runCli(register, ['logs', '--model', 'm', '--follow', '--since', '1m', '--interval', '100ms', '--output', 'text'], env(s), {
      signal: controller.signal,
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.split('\n').filter(Boolean).map((l) => l.split(' ')[2])).toEqual(['a', 'b', 'b', 'c']);
    expect(s.requests.length).toBeGreaterThanOrEqual(5);
    // Each poll re-reads an overlap before the previous end.
    const bodies = s.requests.map((q) => JSON.parse(q.body) as { time_from: string; time_to: string });
    expect(Date.parse(bodies[2]!.time_from)).toBeLessThan(Date.parse(bodies[1]!.time_to));
  });

  it('keeps following through a failing service and stops on a refused token', async () => {
    const controller = new AbortController();
    const line = e(new Date().toISOString(), 'still here');
    const s = await serve((_req, res, i) => {
      if (i === 0) sendJson(res, 503, 'busy', { 'retry-after': '600' });
      else if (i === 1) sendJson(res, 200, logsPage([line]));
      else sendJson(res, 401, 'no');
    });
    const r = await runCli(register, ['logs', '--model', 'm', '--follow', '--interval', '100ms', '--timeout', '1s'], env(s), { signal: controller.signal });
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toContain('still here');
    expect(r.stderr).toMatch(/rate limiting|failed to answer/);
    expect(r.stderr).toMatch(/refused the API token/);
  });
});
