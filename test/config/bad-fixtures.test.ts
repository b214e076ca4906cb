//! Every broken config under test/fixtures/config/bad is one precise problem, as its first-line
//! comment says (`{sink types}` in it: the registry's sink types, as the message lists them).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/cli/config.js';
import { ConfigError, ExitCode } from '../../src/errors.js';
import { BUILTIN_SINKS } from '../../src/sinks/registry.js';

const dir = fileURLToPath(new URL('../fixtures/config/bad/', import.meta.url));
const fixtures = readdirSync(dir)
  .filter((f) => f.endsWith('.yaml'))
  .sort()
  .map((f) => {
    const first = readFileSync(path.join(dir, f), 'utf8').split('\n')[0]!;
    const m = /^# expect: (.+)$/.exec(first);
    if (!m) throw new Error(`${f} does not start with "# expect: <problem>"`);
    return { file: f, expected: m[1]!.replace('{sink types}', BUILTIN_SINKS.map((d) => d.type).join(', ')) };
  });

describe('broken configs', () => {
  test('there are at least 30 of them', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(30);
  });

  test.each(fixtures)('$file is reported as exactly one precise problem', async ({ file, expected }) => {
    // An empty environment: no MLS_API_TOKEN, no credentials directory, no variables.
    const err = await loadConfig(path.join(dir, file), {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems;
    expect(problems, problems.join('\n')).toHaveLength(1);
    expect(problems[0]).toContain(expected);
    expect((err as ConfigError).exitCode).toBe(ExitCode.config);
  });
});
