// What a reload compares: which sections need a restart (api.max_response_bytes alone does
// not), and which sinks changed (a changed sink is restarted with its new settings).
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/index.js';
import { parseConfig } from '../../src/cli/config.js';
import { restartSections, sinkUnchanged } from '../../src/daemon/reload.js';

function config(over: { maxResponseBytes?: string; interval?: string; statePath?: string; timeout?: string } = {}): Config {
  return parseConfig({
    api: { base_url: 'http://127.0.0.1:8080', token: 'tok-reload-test', ...(over.maxResponseBytes ? { max_response_bytes: over.maxResponseBytes } : {}), ...(over.timeout ? { timeouts: { connect: over.timeout } } : {}) },
    state: { path: over.statePath ?? '/var/lib/mls/state.db' },
    poll: { interval: over.interval ?? '10s' },
    models: [{ id: 'm1' }],
    sinks: [{ name: 'hook', type: 'webhook', url: 'http://127.0.0.1:9000/', timeout: over.timeout ?? '10s' }],
  });
}

describe('a reload', () => {
  it('needs no restart for the same config, nor for api.max_response_bytes alone', () => {
    expect(restartSections(config(), config())).toEqual([]);
    expect(restartSections(config(), config({ maxResponseBytes: '128MiB' }))).toEqual([]);
  });

  it('names each section whose other changes wait for a restart', () => {
    expect(restartSections(config(), config({ interval: '5s' }))).toEqual(['poll']);
    expect(restartSections(config(), config({ statePath: '/srv/mls/state.db', timeout: '3s' }))).toEqual(['api', 'state']);
  });

  it('restarts a sink whose settings changed, and only that one', () => {
    const [same] = config().sinks;
    expect(sinkUnchanged(same!, config().sinks[0]!)).toBe(true);
    expect(sinkUnchanged(same!, config({ timeout: '3s' }).sinks[0]!)).toBe(false);
  });
});
