// Every secret field of every built-in sink type (found through the registry and the
// schema's secret marks, not listed by hand) is scrubbed by the running daemon, whether or
// not the sink registers it itself: a receiver refuses every batch with 401 or 400 quoting
// the credentials it was sent (and the signing secret it was not), and none of them, in any
// form, appears in the daemon's log lines, /status, /metrics, `mls status` or `mls dlq list`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { markedFields } from '../../src/config/marks.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { BUILTIN_SINKS } from '../../src/sinks/registry.js';
import { sendJson, startServer, type TestServer } from '../api/helpers.js';
import { formsIn } from '../helpers/secret-forms.js';
import { runMls, startMls, waitFor, writeConfig } from '../e2e/harness.js';

const TOKEN = `tok-SinkSecrets-${randomBytes(4).toString('hex')}`;
type Json = { type?: string | string[]; properties?: Record<string, Json>; additionalProperties?: Json | boolean; items?: Json; anyOf?: Json[]; format?: string; pattern?: string };

/** A value for every field the JSON Schema of a block names, each string naming its path. */
function probe(js: Json, path: string[]): unknown {
  if (js.anyOf) return probe(js.anyOf.find((o) => o.type !== 'null') ?? js.anyOf[0]!, path);
  if (js.properties || typeof js.additionalProperties === 'object') {
    const out: Record<string, unknown> = Object.fromEntries(Object.entries(js.properties ?? {}).map(([k, v]) => [k, probe(v, [...path, k])]));
    if (typeof js.additionalProperties === 'object') out['X-Probe'] = probe(js.additionalProperties, [...path, 'X-Probe']);
    return out;
  }
  if (js.type === 'array' && js.items) return [probe(js.items, [...path, '0'])];
  return path.join('.');
}

/** Per built-in sink type, the paths of its fields the schema marks secret (a secret mapping is one path). */
const SECRET_FIELDS = new Map(
  BUILTIN_SINKS.map((d) => {
    const js = z.toJSONSchema(d.schema, { io: 'input' }) as Json;
    return [d.type, markedFields(d.schema, probe(js, [])).filter((f) => 'secret' in f.mark).map((f) => ({ path: f.path.map(String), url: /uri|https?/.test(JSON.stringify(fieldSchema(js, f.path.map(String)))) }))];
  }),
);

function fieldSchema(js: Json, path: string[]): Json | undefined {
  let at: Json | undefined = js;
  for (const key of path) at = at?.properties?.[key] ?? at?.anyOf?.find((o) => o.properties?.[key])?.properties?.[key];
  return at;
}

/** A block of each type that has secret fields, sending to the receiver at `url`. */
const BLOCKS: Record<string, (url: string) => Record<string, unknown>> = {
  webhook: (url) => ({ type: 'webhook', url: `${url}/webhook`, batch: { max_delay: '50ms' } }),
  otlp: (url) => ({ type: 'otlp', endpoint: `${url}/otlp`, protocol: 'http/json', compression: 'none', batch: { max_delay: '50ms' } }),
};

let dir: string;
let sim: Simulator;
let receiver: TestServer;
/** Every credential the config holds, by where it is. */
const credentials = new Map<string, string>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-sinksecrets-'));
  sim = await startSimulator({ token: TOKEN, models: ['m1'], ratePerSec: 20, historyMs: 5_000, seed: 9 });
  // Refuses every batch, quoting every credential of the config, plain and in base64 inside user:secret.
  receiver = await startServer((req, res) => {
    const quoted = [...credentials.values()].map((c) => `${c} ${Buffer.from(`u:${c}`).toString('base64')}`).join(' ');
    sendJson(res, req.url.startsWith('/webhook') ? 401 : 400, { error: `credentials refused: ${quoted}` });
  });
});
afterAll(async () => {
  await sim?.close();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the secret fields of every built-in sink type', () => {
  it('are known: every type with one has a block in this test', () => {
    const withSecrets = [...SECRET_FIELDS].filter(([, fields]) => fields.length > 0).map(([type]) => type);
    expect(withSecrets.sort()).toEqual(Object.keys(BLOCKS).sort());
    expect(SECRET_FIELDS.get('webhook')!.map((f) => f.path.join('.'))).toEqual(expect.arrayContaining(['headers', 'signing_secret']));
  });

  it('appear in no log line, /status, /metrics, mls status or mls dlq list, whatever the receiver quotes', { timeout: 90_000 }, async () => {
    const sinks = Object.entries(BLOCKS).map(([type, block]) => {
      const b: Record<string, unknown> = { name: `to-${type}`, ...block(receiver.url) };
      for (const field of SECRET_FIELDS.get(type)!) {
        const cred = `cred-${type}-${field.path.join('-')}-${randomBytes(5).toString('hex')}`;
        credentials.set(`${type}.${field.path.join('.')}`, cred);
        // a secret mapping (headers) gets one credential; a URL field carries it as its password
        const value = field.path.at(-1) === 'headers' ? { 'X-Credential': cred } : field.url ? `http://mls:${cred}@${receiver.url.slice('http://'.length)}` : cred;
        let at = b;
        for (const key of field.path.slice(0, -1)) at = (at[key] ??= {}) as Record<string, unknown>;
        at[field.path.at(-1)!] = value;
      }
      return b;
    });
    const cfg = {
      api: { base_url: sim.url, token: '${MLS_API_TOKEN}' },
      state: { path: join(dir, 'state', 'state.db') },
      poll: { interval: '300ms', lookback: '1s', settle: '100ms', start_at: '-5s', rate_limit: 'none' },
      models: [{ id: 'm1' }],
      sinks,
      admin: { listen: '127.0.0.1:0' },
      shutdown_timeout: '10s',
    };
    const config = writeConfig(dir, cfg);
    const env = { MLS_API_TOKEN: TOKEN };
    const outputs: Array<[string, string]> = [];
    const daemon = startMls(['run', '--config', config, '--log-level', 'debug'], env);
    try {
      let address = '';
      await waitFor(() => (address = /"address":"([^"]+)"[^\n]*admin server listening/.exec(daemon.stderr())?.[1] ?? '') !== '', 15_000, 'the admin server', 100, daemon.stderr);
      // every sink has had a batch refused, quoting the credentials
      await waitFor(
        async () => {
          const st = JSON.parse(await (await fetch(`http://${address}/status`)).text()) as { sinks: Array<{ deadLetters: number }> };
          return st.sinks.every((s) => s.deadLetters > 0);
        },
        30_000,
        'a dead letter in every sink',
        200,
        daemon.stderr,
      );
      for (const path of ['/status', '/metrics', '/readyz']) outputs.push([`GET ${path}`, await (await fetch(`http://${address}${path}`)).text()]);
      const r = await runMls(['status', '--config', writeConfig(dir, { ...cfg, admin: { listen: address } }, 'status.yaml')], env);
      expect(r.code, r.stderr).toBe(0);
      outputs.push(['mls status (daemon)', r.stdout + r.stderr]);
    } finally {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }
    expect(daemon.stderr()).toMatch(/credentials refused: \[REDACTED\]/);
    outputs.push(['daemon stderr', daemon.stderr()], ['daemon stdout', daemon.stdout()]);
    for (const args of [['status'], ['dlq', 'list']]) {
      const r = await runMls([...args, '--config', config], env);
      expect(r.code, r.stderr).toBe(0);
      outputs.push([`mls ${args.join(' ')}`, r.stdout + r.stderr]);
    }
    expect(outputs.at(-1)![1]).toMatch(/HTTP 40[01].*credentials refused/);

    const found = outputs.flatMap(([what, text]) => [...credentials].flatMap(([name, cred]) => formsIn(text, cred).map((form) => `${name} (${form}) in ${what}`)));
    console.log(`sink secrets: ${credentials.size} credentials (${[...credentials.keys()].join(', ')}), ${outputs.length} outputs: ${found.length === 0 ? 'none found' : found.join(', ')}`);
    expect(found).toEqual([]);
  });
});
