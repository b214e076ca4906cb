//! A sink URL that carries credentials is refused once, under the sink's path, with where
//! the credentials belong instead: the sink's headers, not the API token.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/cli/config.js';
import { ConfigError } from '../../src/errors.js';
import { runMls, writeConfig } from '../e2e/harness.js';

const PASSWORD = 'pw-UrlCred-93ad1';
const config = {
  api: { base_url: 'https://api.example.com', token: 'test-token' },
  models: [{ id: 'model-a' }],
  sinks: [
    { name: 'console', type: 'stdout' },
    { name: 'hook', type: 'webhook', url: `https://ingest:${PASSWORD}@hooks.example.com/in` },
    { name: 'otel', type: 'otlp', endpoint: `https://collector:${PASSWORD}@otel.example.com` },
  ],
};

const dir = mkdtempSync(join(tmpdir(), 'mls-sinkcred-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a sink URL with credentials', () => {
  it("is one problem per sink, naming the sink's path and its headers as the place for credentials", () => {
    let err: unknown;
    try {
      parseConfig(config, { env: {} });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems;
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^sinks\[1\]\.url: must not carry credentials .*headers: \{ Authorization: 'Basic \$\{MLS_SINK_AUTH\}' \}/);
    expect(problems[1]).toMatch(/^sinks\[2\]\.endpoint: must not carry credentials .*headers/);
    for (const p of problems) {
      expect(p).not.toContain('api.token');
      expect(p).not.toContain(PASSWORD);
    }
    // the API URL's credentials still point to the token
    expect(() => parseConfig({ ...config, api: { base_url: `https://u:${PASSWORD}@api.example.com`, token: 't-token' }, sinks: [config.sinks[0]] }, { env: {} })).toThrow(
      /api\.base_url: must not carry credentials; put the token in api\.token/,
    );
  });

  it('is printed once by mls run and by mls validate', async () => {
    const file = writeConfig(dir, config);
    for (const command of ['run', 'validate']) {
      const r = await runMls([command, '--config', file]);
      expect(r.code, r.stderr).toBe(78);
      const mentions = r.stderr.split('\n').filter((l) => l.includes('must not carry credentials'));
      expect(mentions.map((l) => l.trim().replace(/^.*?(sinks\[\d\]\.\w+).*$/, '$1')), `${command}:\n${r.stderr}`).toEqual(['sinks[1].url', 'sinks[2].endpoint']);
      expect(r.stderr).not.toContain(PASSWORD);
    }
  });
});
