// The API token never leaves the Authorization header: a recognisable token is used by a
// daemon (debug logging, a faulty service, dead letters, the admin server) and by every
// command, and is then searched for in everything they produced: stdout and stderr of each
// command, /metrics, /status, every text column of every table of the state file (and its
// raw bytes), and the file sink's output. Also: `--token` on the command line is refused,
// files are created private, and the admin server binds 127.0.0.1 unless told otherwise.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { parseConfig } from '../../src/cli/config.js';
import { readNdjsonTree, readState, runMls, startMls, waitFor, writeConfig, type MlsProcess } from '../e2e/harness.js';

const TOKEN = `tok-LEAKCHECK-8d1f${randomBytes(8).toString('hex')}`;
const OTHER_TOKEN = `tok-OTHER-${randomBytes(6).toString('hex')}`;
const MODELS = ['leak-a', 'leak-b'];

let dir: string;
let sim: Simulator;
let otherSim: Simulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-leak-'));
  sim = await startSimulator({
    token: TOKEN,
    models: MODELS,
    ratePerSec: 20,
    historyMs: 10_000,
    pageSize: { min: 20, max: 80 },
    faults: { error500: 0.05, error503: 0.05, error429: 0.05, truncated: 0.05, html200: 0.05, retryAfter: 0 },
    seed: 11,
  });
  // Same models, another token: everything sent to it is refused with 401.
  otherSim = await startSimulator({ token: OTHER_TOKEN, models: MODELS, ratePerSec: 1, seed: 12 });
});
afterAll(async () => {
  await sim?.close();
  await otherSim?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every file under `root`, recursively. */
function files(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? files(join(root, d.name)) : [join(root, d.name)]));
}

function mode(path: string): string {
  return (statSync(path).mode & 0o777).toString(8).padStart(4, '0');
}

/** Every text (and blob) value of every table of a SQLite file. */
function stateTexts(path: string): { tables: string[]; values: number; texts: string[] } {
  const db = new Database(path, { readonly: true });
  try {
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name);
    const texts: string[] = [];
    let values = 0;
    for (const t of tables) {
      for (const row of db.prepare(`SELECT * FROM "${t.replaceAll('"', '""')}"`).raw().iterate() as Iterable<unknown[]>) {
        for (const v of row) {
          values++;
          if (typeof v === 'string') texts.push(v);
          else if (Buffer.isBuffer(v)) texts.push(v.toString('latin1'));
        }
      }
    }
    return { tables, values, texts };
  } finally {
    db.close();
  }
}

describe('the API token stays secret', () => {
  it('appears nowhere in what the daemon and the commands produce', { timeout: 90_000 }, async () => {
    const statePath = join(dir, 'state', 'state.db');
    const outDir = join(dir, 'out');
    const rejectSink = join(dir, 'reject-sink.js');
    // A custom sink that refuses leak-b's batches: they go to the dead-letter table.
    writeFileSync(
      rejectSink,
      `export default async function createSink() {
        return {
          async healthcheck() { return { ok: true }; },
          async send(batch) {
            return batch.entries.some((e) => e.modelId === 'leak-b') ? { status: 'reject', error: 'refused by the test sink' } : { status: 'ok' };
          },
          async flush() {},
          async close() {},
        };
      }\n`,
    );
    const cfg = {
      api: { base_url: sim.url, token: '${MLS_API_TOKEN}', retry: { deadline: '2s', base_delay: '20ms', max_delay: '200ms' }, timeouts: { connect: '1s', headers: '2s', body: '2s' } },
      state: { path: statePath },
      poll: { interval: '300ms', lookback: '2s', settle: '100ms', start_at: '-8s', max_window: '5s', rate_limit: 'none', reread: { ages: ['1s'] } },
      models: MODELS.map((id) => ({ id })),
      sinks: [
        { name: 'archive', type: 'file', path: join(outDir, '{model_id}', '%Y-%m-%d.ndjson'), batch: { max_delay: '50ms' } },
        { name: 'picky', type: 'module', path: rejectSink, batch: { max_delay: '50ms' } },
        { name: 'console', type: 'stdout', batch: { max_delay: '50ms' } },
      ],
      admin: { listen: ':0' }, // no host given: the admin server must still bind 127.0.0.1
      shutdown_timeout: '10s',
    };
    const config = writeConfig(dir, cfg);
    const env = { MLS_API_TOKEN: TOKEN, MLS_API_URL: sim.url };
    const outputs: Array<[string, string]> = [];
    const record = (what: string, r: { stdout: string; stderr: string }) => {
      outputs.push([`${what} stdout`, r.stdout], [`${what} stderr`, r.stderr]);
    };

    const daemon: MlsProcess = startMls(['run', '--config', config, '--log-level', 'debug'], env);
    let address = '';
    try {
      await waitFor(() => {
        const m = /"address":"([^"]+)"[^\n]*admin server listening/.exec(daemon.stderr());
        if (m) address = m[1]!;
        return address !== '' || daemon.child.exitCode !== null;
      }, 15_000, 'the admin server to listen');
      expect(address, daemon.stderr()).toMatch(/^127\.0\.0\.1:\d+$/);
      await waitFor(() => readNdjsonTree(outDir).length > 200, 20_000, 'entries in the file sink');
      await waitFor(() => {
        const db = existsSync(statePath) ? new Database(statePath, { readonly: true }) : undefined;
        try {
          return ((db?.prepare('SELECT count(*) AS n FROM dlq').get() as { n: number } | undefined)?.n ?? 0) > 0;
        } catch {
          return false;
        } finally {
          db?.close();
        }
      }, 20_000, 'dead letters');
      await waitFor(() => (sim.stats().faultsInjected.error500 ?? 0) > 0 && (sim.stats().faultsInjected.html200 ?? 0) > 0, 20_000, 'faults to be injected');

      // the admin server
      for (const path of ['/metrics', '/status', '/healthz', '/readyz', '/nope']) {
        const res = await fetch(`http://${address}${path}`);
        outputs.push([`GET ${path}`, await res.text()]);
      }
      const metrics = outputs.find(([k]) => k === 'GET /metrics')![1];
      expect(metrics).toContain('mls_entries_fetched_total');

      // commands, while the daemon runs
      const statusCfg = writeConfig(dir, { ...cfg, admin: { listen: address } }, 'status.yaml');
      record('status (daemon)', await runMls(['status', '--config', statusCfg], env));
      record('status --json (daemon)', await runMls(['status', '--config', statusCfg, '--json'], env));
      const logs = await runMls(['logs', '--model', 'leak-a', '--since', '20s', '--api-url', sim.url], env);
      expect(logs.code, logs.stderr).toBe(0);
      expect(logs.stdout.split('\n').filter(Boolean).length).toBeGreaterThan(0);
      record('logs', logs);
      const refused = await runMls(['logs', '--model', 'leak-a', '--since', '20s', '--api-url', otherSim.url], env);
      expect(refused.code).toBe(3);
      expect(refused.stderr).toMatch(/MLS_ERR_API_AUTH|refused|401/);
      record('logs (401)', refused);
      const dry = await runMls(['settings', 'update', '--model', 'leak-a', '--min-replica', '1', '--max-replica', '2', '--dry-run'], env);
      expect(dry.code, dry.stderr).toBe(0);
      record('settings --dry-run', dry);
      const countBefore = sim.settingsUpdates.length;
      const real = await runMls(['settings', 'update', '--model', 'leak-a', '--min-replica', '1', '--max-replica', '2'], env);
      expect(real.code, real.stderr).toBe(0);
      expect(sim.settingsUpdates.length).toBe(countBefore + 1);
      record('settings', real);
      const realRefused = await runMls(['settings', 'update', '--model', 'leak-a', '--min-replica', '1', '--api-url', otherSim.url], env);
      expect(realRefused.code).toBe(3);
      record('settings (401)', realRefused);
      const dlq = await runMls(['dlq', 'list', '--config', config, '--entries'], env);
      expect(dlq.code, dlq.stderr).toBe(0);
      expect(dlq.stdout).toContain('picky');
      record('dlq list', dlq);
      record('state check (running)', await runMls(['state', 'check', '--config', config], env));
    } finally {
      daemon.child.kill('SIGTERM');
      const end = await daemon.exited;
      expect(end.code, daemon.stderr()).toBe(0);
    }
    outputs.push(['daemon stdout', daemon.stdout()], ['daemon stderr', daemon.stderr()]);
    // the faults made the daemon talk about errors, so its stderr was worth searching
    expect(daemon.stderr()).toMatch(/retrying|HTTP 5\d\d|HTML/);

    // commands after the daemon stopped: they read the state file
    record('status (state file)', await runMls(['status', '--config', config], env));
    const check = await runMls(['state', 'check', '--config', config], env);
    expect(check.code, check.stderr).toBe(0);
    record('state check', check);
    record('dlq list (state file)', await runMls(['dlq', 'list', '--config', config, '--entries'], env));

    // a broken config that interpolates the token into the wrong places
    const broken = writeConfig(dir, { ...cfg, api: { base_url: 'ftp://${MLS_API_TOKEN}', token: '${MLS_API_TOKEN}' }, poll: { interval: '${MLS_API_TOKEN}' }, sinks: [{ name: 'x', type: 'file', path: '/tmp/${MLS_API_TOKEN}/{nope}' }] }, 'broken.yaml');
    const validate = await runMls(['validate', '--config', broken], env);
    expect(validate.code).toBe(78);
    expect(validate.stderr).toContain('poll.interval');
    record('validate (broken)', validate);
    const runBroken = await runMls(['run', '--config', broken], env);
    expect(runBroken.code).toBe(78);
    record('run (broken)', runBroken);

    // search
    const leaks: string[] = [];
    for (const [what, text] of outputs) if (text.includes(TOKEN)) leaks.push(what);
    const st = stateTexts(statePath);
    expect(st.tables).toEqual(expect.arrayContaining(['journal', 'dlq', 'checkpoints', 'sinks', 'meta']));
    st.texts.forEach((t, i) => t.includes(TOKEN) && leaks.push(`state file text value #${i}`));
    for (const f of files(join(dir, 'state'))) if (readFileSync(f).includes(TOKEN)) leaks.push(`raw bytes of ${f}`);
    const shipped = files(outDir);
    expect(shipped.length).toBeGreaterThan(0);
    for (const f of shipped) if (readFileSync(f).includes(TOKEN)) leaks.push(f);
    const scanned = outputs.reduce((n, [, t]) => n + t.length, 0);
    console.log(
      `token leak check: ${outputs.length} outputs (${scanned} characters), ${st.tables.length} state tables (${st.values} values), ` +
        `${shipped.length} sink files, ${readState(statePath)?.lastSeq ?? 0} entries journaled: ${leaks.length === 0 ? 'token found nowhere' : `token found in ${leaks.join(', ')}`}`,
    );
    expect(leaks).toEqual([]);

    // private files: state 0600 in 0700, sink files 0600 in 0700 (the defaults)
    expect(mode(statePath)).toBe('0600');
    expect(mode(join(dir, 'state'))).toBe('0700');
    for (const f of shipped) expect(mode(f), f).toBe('0600');
    for (const d of [outDir, join(outDir, 'leak-a')]) expect(mode(d), d).toBe('0700');
  });

  it('refuses a token on the command line with advice, exit 2, without echoing it', async () => {
    for (const args of [
      ['logs', '--model', 'leak-a', '--since', '1m', '--api-url', sim.url, '--token', TOKEN],
      ['settings', 'update', '--model', 'leak-a', '--min-replica', '1', '--api-url', sim.url, `--token=${TOKEN}`],
    ]) {
      const r = await runMls(args, { MLS_API_TOKEN: '' });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--token is not accepted/);
      expect(r.stderr).toMatch(/MLS_API_TOKEN|--token-file/);
      expect(r.stdout + r.stderr).not.toContain(TOKEN);
    }
    expect(sim.settingsUpdates.every((u) => u.data.min_replica !== undefined)).toBe(true);
  });

  it('has no admin server unless configured', () => {
    const base = { api: { base_url: 'http://127.0.0.1:1', token: 'x-token' }, models: [{ id: 'm' }], sinks: [{ name: 's', type: 'stdout' }] };
    expect(parseConfig(base, { baseDir: dir, env: {} }).admin).toBeUndefined();
  });
});
