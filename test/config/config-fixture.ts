//! What the config loading tests share: a minimal config, the problems a ConfigError lists,
//! and temporary folders removed after each file's tests (register {@link removeTmpAfterAll}).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect } from 'vitest';
import { ConfigError } from '../../src/errors.js';

/** The smallest valid config: one model, one stdout sink. */
export const minimal = () => ({
  api: { base_url: 'https://api.example.com', token: 'test-token' },
  models: [{ id: 'model-a' }],
  sinks: [{ name: 'console', type: 'stdout' }],
});

/** The problems of the ConfigError `fn` throws (fails when it throws nothing or something else). */
export function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return [...(err as ConfigError).problems];
  }
  throw new Error('expected a ConfigError');
}

const made: string[] = [];

/** Removes the folders {@link tmp} made, after the file's tests. */
export function removeTmpAfterAll(): void {
  afterAll(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
}

/** A new temporary folder. */
export function tmp(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'mls-config-'));
  made.push(dir);
  return dir;
}
