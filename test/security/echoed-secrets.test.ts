// A service that echoes the Authorization header in its 400 answers, and a webhook receiver
// that echoes the sink's API-key header, send the secrets back in other forms: lowercase,
// uppercase, base64 (alone or inside `user:secret`), percent-encoded. None of these forms
// may reach the client's errors, the daemon's log lines, /status, `mls status`, or the
// error of `mls logs`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiClient } from '../../src/api/client.js';
import { ApiClientError } from '../../src/api/errors.js';
import { startServer, sendJson, type TestServer } from '../api/helpers.js';
import { page, startHostileService, type HostileService, type LogsCall } from '../helpers/hostile-service.js';
import { echoedForms, formsIn } from '../helpers/secret-forms.js';
import { runMls, startMls, waitFor, writeConfig, type MlsProcess } from '../e2e/harness.js';

// Mixed case, and a `+` and a `/` that percent-encoding changes.
const TOKEN = `tok-EchoCheck+${randomBytes(6).toString('hex')}/Zq`;
const HOOK_KEY = `hk-EchoKey-${randomBytes(6).toString('hex')}`;
const FORMS = echoedForms(TOKEN);
/** Model `echo-<i>` is answered with form i of the token; `reversed` with the token reversed after a label; `ok` with entries. */
const MODELS = [...FORMS.map((_, i) => `echo-${i}`), 'reversed', 'ok'];
const REVERSED = [...TOKEN].reverse().join('');

let dir: string;
let service: HostileService;
let receiver: TestServer;

/** The 400 the service sends for `modelId`: its `details` echo the token in one form. */
function echoAnswer(call: LogsCall) {
  if (call.modelId === 'ok') {
    const t = new Date(call.fromMs + 1).toISOString();
    return { body: page([{ time: t, stream: 'stdout', log: 'a line for the webhook' }]) };
  }
  const details =
    call.modelId === 'reversed'
      ? `the request's headers were authorization=${REVERSED}; expected a current token`
      : `invalid token ${FORMS[Number(call.modelId.slice('echo-'.length))]!.form}: it is not current`;
  return { status: 400, body: { status: 'error', details } };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-echo-'));
  service = await startHostileService(echoAnswer);
  // The receiver refuses every batch and quotes the API key it got, in three forms.
  receiver = await startServer((req, res) => {
    const key = String(req.headers['x-api-key']);
    const quoted = `${key.toLowerCase()} ${Buffer.from(key).toString('base64')} ${Buffer.from(`svc:${key}`).toString('base64url')}`;
    sendJson(res, 400, { error: `unknown api key ${quoted}` });
  });
});
afterAll(async () => {
  await service?.close();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every form of the token and of the webhook key still in `text`, by name. */
function leaks(text: string): string[] {
  const found = [...formsIn(text, TOKEN).map((f) => `token ${f}`), ...formsIn(text, HOOK_KEY).map((f) => `key ${f}`)];
  if (text.includes(REVERSED)) found.push('token reversed, after an Authorization label');
  return found;
}

describe('a secret echoed back in another form', () => {
  it('is in no error of the client', async () => {
    const client = createApiClient({ baseUrl: service.url, token: TOKEN, retry: { deadlineMs: 5_000 } });
    try {
      for (const modelId of MODELS.filter((m) => m !== 'ok')) {
        const err = await client.getLogs({ modelId, fromMs: Date.now() - 10_000, toMs: Date.now() }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err, modelId).toBeInstanceOf(ApiClientError);
        const e = err as ApiClientError;
        expect(e.message, modelId).toMatch(/HTTP 400.*\[REDACTED\]/);
        expect(leaks(`${e.message} ${e.details ?? ''}`), `${modelId}: ${e.message}`).toEqual([]);
      }
    } finally {
      await client.close();
    }
    // the service did see the token itself: the echo is the only way back
    expect(service.calls.every((c) => c.authorization === TOKEN)).toBe(true);
  });

  it('is in no log line of the daemon, nor in /status, mls status or the error of mls logs', { timeout: 90_000 }, async () => {
    const cfg = {
      api: { base_url: service.url, token: '${MLS_API_TOKEN}', retry: { deadline: '2s', base_delay: '20ms', max_delay: '200ms' } },
      state: { path: join(dir, 'state', 'state.db') },
      poll: { interval: '300ms', lookback: '1s', settle: '100ms', start_at: '-5s', max_window: '5s', rate_limit: 'none' },
      models: MODELS.map((id) => ({ id })),
      sinks: [
        {
          name: 'hook',
          type: 'webhook',
          url: `${receiver.url}/ingest`,
          headers: { 'X-Api-Key': '${MLS_HOOK_KEY}' },
          batch: { max_delay: '50ms' },
        },
      ],
      admin: { listen: '127.0.0.1:0' },
      shutdown_timeout: '10s',
    };
    const config = writeConfig(dir, cfg);
    const env = { MLS_API_TOKEN: TOKEN, MLS_HOOK_KEY: HOOK_KEY };
    const outputs: Array<[string, string]> = [];
    const daemon: MlsProcess = startMls(['run', '--config', config, '--log-level', 'debug'], env);
    try {
      let address = '';
      await waitFor(() => {
        address = /"address":"([^"]+)"[^\n]*admin server listening/.exec(daemon.stderr())?.[1] ?? '';
        return address !== '' || daemon.child.exitCode !== null;
      }, 15_000, 'the admin server to listen');
      expect(address, daemon.stderr()).not.toBe('');
      // every echoing model has failed once, and the webhook refused a batch
      let status = '';
      await waitFor(
        async () => {
          status = await (await fetch(`http://${address}/status`)).text();
          const st = JSON.parse(status) as { models: Array<{ id: string; lastError?: string }>; sinks: Array<{ lastError?: string }> };
          return st.models.filter((m) => m.id !== 'ok').every((m) => m.lastError?.includes('HTTP 400')) && st.sinks.every((s) => s.lastError !== undefined);
        },
        30_000,
        'every model and the webhook sink to report an error',
        200,
        () => status,
      );
      outputs.push(['GET /status', status]);
      outputs.push(['GET /readyz', await (await fetch(`http://${address}/readyz`)).text()]);
      const statusCfg = writeConfig(dir, { ...cfg, admin: { listen: address } }, 'status.yaml');
      for (const args of [['status'], ['status', '--json']]) {
        const r = await runMls([...args, '--config', statusCfg], env);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain('echo-0');
        outputs.push([`mls ${args.join(' ')}`, r.stdout + r.stderr]);
      }
    } finally {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }
    const stderr = daemon.stderr();
    expect(stderr).toContain('the service rejected the logs request');
    expect(stderr).toMatch(/unknown api key/);
    outputs.push(['daemon stderr', stderr], ['daemon stdout', daemon.stdout()]);

    // `mls logs`: one run per model, so that each form is quoted in full within the excerpt
    const logsRuns = await Promise.all(
      MODELS.filter((m) => m !== 'ok').map((m) => runMls(['logs', '--model', m, '--since', '10s', '--api-url', service.url, '--timeout', '5s'], env)),
    );
    for (const [i, r] of logsRuns.entries()) {
      expect(r.code, r.stderr).toBe(4);
      expect(r.stderr).toMatch(/HTTP 400.*\[REDACTED\]/);
      outputs.push([`mls logs --model ${MODELS[i]!}`, r.stdout + r.stderr]);
    }

    const found = outputs.flatMap(([what, text]) => leaks(text).map((l) => `${l} in ${what}`));
    const chars = outputs.reduce((n, [, t]) => n + t.length, 0);
    console.log(
      `echoed secrets: ${FORMS.length + 1} forms of the token and 3 of a webhook key, ${outputs.length} outputs (${chars} characters, ` +
        `${stderr.split('\n').length - 1} daemon log lines): ${found.length === 0 ? 'none found' : found.join(', ')}`,
    );
    expect(found).toEqual([]);
  });
});
