import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveApiOptions, runCommand, type CommandIo } from '../../src/cli/common.js';
import { ApiAuthError } from '../../src/api/errors.js';
import { UsageError } from '../../src/errors.js';
import { scrubSecrets } from '../../src/telemetry/secrets.js';
import { TOKEN } from '../api/helpers.js';

function io(): CommandIo & { err: string; code: number } {
  const state = { err: '', code: 0 };
  const stderr = new Writable({
    write(chunk: Buffer, _enc, cb) {
      state.err += chunk.toString();
      cb();
    },
  });
  return Object.assign(state, {
    stdout: new Writable({ write: (_c, _e, cb) => cb() }),
    stderr,
    env: {},
    setExitCode: (c: number) => {
      state.code = c;
    },
  }) as CommandIo & { err: string; code: number };
}

const made: string[] = [];
afterAll(async () => {
  await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A new temporary folder, removed after the file's tests. */
async function tmp(): Promise<string> {
  const dir = await mkdtemp(`${tmpdir()}/mls-`);
  made.push(dir);
  return dir;
}

describe('resolveApiOptions', () => {
  it('prefers --token-file over the environment, trims the newline, and registers the token for scrubbing', async () => {
    const dir = await tmp();
    await writeFile(`${dir}/t`, `  ${TOKEN}\n`);
    const o = await resolveApiOptions({ apiUrl: 'http://h/prefix', tokenFile: `${dir}/t`, timeout: '5s' }, { MLS_API_TOKEN: 'other-token' });
    expect(o.token).toBe(TOKEN);
    expect(o.baseUrl).toBe('http://h/prefix');
    expect(o.authScheme).toBe('raw');
    expect(o.retry?.deadlineMs).toBe(5000);
    expect(scrubSecrets(`x ${TOKEN} y`)).toBe('x [REDACTED] y');
  });

  it('takes the URL and token from the environment', async () => {
    const o = await resolveApiOptions({}, { MLS_API_URL: 'https://svc.example/', MLS_API_TOKEN: TOKEN });
    expect(o).toMatchObject({ baseUrl: 'https://svc.example/', token: TOKEN });
  });

  it.each([
    [{ tokenFile: '/nonexistent/mls-token' }, /--token-file: cannot read \/nonexistent\/mls-token \(ENOENT\)/],
    [{ apiUrl: 'ftp://h/' }, /--api-url: expected an http/],
    [{ apiUrl: 'http://u:p@h/' }, /credentials/],
    [{ token: TOKEN }, /shows in `ps`/],
  ])('refuses %j', async (opts, message) => {
    const err = await resolveApiOptions({ apiUrl: 'http://h/', ...opts }, { MLS_API_TOKEN: TOKEN }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain(TOKEN);
  });

  it('refuses a token file that is a FIFO, without waiting for a writer', { timeout: 10_000 }, async () => {
    const dir = await tmp();
    execFileSync('mkfifo', [`${dir}/fifo`]);
    await expect(resolveApiOptions({ apiUrl: 'http://h/', tokenFile: `${dir}/fifo` }, {})).rejects.toThrow(`--token-file: ${dir}/fifo is not a regular file`);
  });

  it('refuses an empty token file', async () => {
    const dir = await tmp();
    await writeFile(`${dir}/t`, '\n');
    await expect(resolveApiOptions({ apiUrl: 'http://h/', tokenFile: `${dir}/t` }, {})).rejects.toThrow(/is empty/);
  });
});

describe('runCommand', () => {
  it.each([
    [new UsageError('bad flag'), 2, 'mls: bad flag\n'],
    [new ApiAuthError(401), 3, /^mls: the service refused the API token/],
    [new TypeError('boom'), 1, 'mls: unexpected error: boom\n'],
  ])('maps %s to exit code %d', async (err, code, message) => {
    const o = io();
    await runCommand(o, async () => {
      throw err;
    })();
    expect(o.code).toBe(code);
    if (typeof message === 'string') expect(o.err).toBe(message);
    else expect(o.err).toMatch(message);
  });
});
