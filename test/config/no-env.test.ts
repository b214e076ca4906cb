//! A config checked without its environment (`mls validate --no-env`): unset variables and a
//! token from outside the file stand for any value their field accepts; every other check runs.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import type { StandIns } from '../../src/config/index.js';
import { parseConfig } from '../../src/cli/config.js';
import { minimal, problemsOf, removeTmpAfterAll, tmp } from './config-fixture.js';

removeTmpAfterAll();

function check(raw: unknown, env: NodeJS.ProcessEnv = {}): { config: ReturnType<typeof parseConfig>; standIns: StandIns } {
  let standIns: StandIns | undefined;
  const config = parseConfig(raw, { env, noEnv: true, onStandIns: (s) => (standIns = s) });
  return { config, standIns: standIns! };
}

/** Variables in fields of every kind: URL, enumeration, duration, number, boolean, size, rate, listen address, path. */
const typed = () => ({
  api: { base_url: '${API_URL}', auth_scheme: '${SCHEME}', timeouts: { connect: '${CONNECT}' } },
  poll: { concurrency: '${CONC}', interval: '${SECS}s', rate_limit: '${RATE}' },
  admin: { listen: '${LISTEN}' },
  models: [{ id: 'm', is_less_logs: '${LESS}' }],
  sinks: [
    { name: 'hook', type: 'webhook', url: 'https://${HOST}/hook', compression: '${COMP}', headers: { 'X-Api-Key': '${KEY}' } },
    { name: 'files', type: 'file', path: '${OUT}/x.ndjson', fsync: '${FSYNC}' },
  ],
  buffer: { when_full: '${WHEN_FULL}', max_bytes: '${BYTES}' },
  log: { level: '${LEVEL}' },
});

describe('validation without the environment', () => {
  test('an unset variable satisfies the field it is in, whatever its kind, and is named', () => {
    const { standIns } = check(typed());
    expect(standIns.variables).toEqual(['API_URL', 'SCHEME', 'CONNECT', 'CONC', 'SECS', 'RATE', 'LISTEN', 'LESS', 'HOST', 'COMP', 'KEY', 'OUT', 'FSYNC', 'WHEN_FULL', 'BYTES', 'LEVEL']);
    expect(standIns.token).toBe(true);
  });

  test('the environment is not read: a variable set to a bad value still stands for any value', () => {
    expect(() => check(typed(), { CONC: 'many', SCHEME: 'digest', MLS_API_TOKEN: 'bad\nline' })).not.toThrow();
  });

  test('a value wrong whatever its variable holds is reported', () => {
    const raw = { ...minimal(), sinks: [{ name: 'hook', type: 'webhook', url: 'ftp://${HOST}/hook' }] };
    expect(problemsOf(() => check(raw))).toEqual(['sinks[0].url: "ftp:" is not supported; the URL must start with http:// or https://']);
  });

  test('every other check still runs: schema, cross-field rules and the sinks’ own checks', () => {
    const raw = {
      ...typed(),
      poll: { ...typed().poll, lookback: '2h', max_window: '1h', intervall: '5s' },
      sinks: [...typed().sinks, { name: 'hook', type: 'stdout' }],
    };
    const problems = problemsOf(() => check(raw));
    expect(problems).toContainEqual(expect.stringMatching(/^poll\.intervall: unknown key; did you mean interval\?/));
    expect(problems).toContainEqual(expect.stringMatching(/^poll\.lookback: /));
    expect(problems).toContainEqual(expect.stringMatching(/^sinks\[2\]\.name: "hook" is already/));
    expect(problems).toHaveLength(3);
  });

  test('a check comparing values that hold variables does not fail on the stand-ins', () => {
    // The same stand-in in both paths would make the two sinks write one file; ${A} and ${B} may differ.
    const raw = { ...minimal(), sinks: [{ name: 'a', type: 'file', path: '${A}/x.ndjson' }, { name: 'b', type: 'file', path: '${B}/x.ndjson' }] };
    expect(() => check(raw)).not.toThrow();
  });

  test('a default of ${VAR:-default} is used, and checked', () => {
    const raw = { ...minimal(), poll: { interval: '${INTERVAL:-20s}', lookback: '${LOOKBACK:-soon}' } };
    expect(problemsOf(() => check(raw))).toEqual([expect.stringMatching(/^poll\.lookback: "soon" is not a duration/)]);
    raw.poll.lookback = '${LOOKBACK:-1m}';
    expect(check(raw).config.poll.interval).toBe(20_000);
  });

  test('the token: from the environment or a token file that is not here, it stands in; a token file that is here is read', () => {
    const noToken = () => ({ ...minimal(), api: { base_url: 'https://api.example.com' } });
    expect(check(noToken()).standIns).toEqual({ variables: [], token: true });
    const dir = tmp();
    const missing = { ...noToken(), api: { base_url: 'https://api.example.com', token_file: path.join(dir, 'absent') } };
    expect(check(missing).standIns.token).toBe(true);
    writeFileSync(path.join(dir, 'empty'), '\n');
    const empty = { ...noToken(), api: { base_url: 'https://api.example.com', token_file: path.join(dir, 'empty') } };
    expect(problemsOf(() => check(empty))).toEqual([`api.token_file: ${path.join(dir, 'empty')} is empty; write the token into it`]);
    expect(check(minimal()).standIns).toEqual({ variables: [], token: false });
  });

  test('variables in a models file stand in too, even when the environment sets them', () => {
    const dir = tmp();
    writeFileSync(path.join(dir, 'models.yaml'), '- id: ${MODEL}\n  is_less_logs: true\n');
    const raw = { ...minimal(), models: undefined, models_file: 'models.yaml' };
    let standIns: StandIns | undefined;
    const config = parseConfig(raw, { baseDir: dir, env: { MODEL: 'from-env' }, noEnv: true, onStandIns: (s) => (standIns = s) });
    expect(standIns!.variables).toEqual(['MODEL']);
    expect(config.models.map((m) => m.id)).toEqual(['placeholder']);
  });
});
