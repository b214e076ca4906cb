import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LARGE_FROM_CONFIG_BYTES, LARGE_FROM_MODELS, LARGE_SEMI_SPACE_MB, SHIPPED_SEMI_SPACE_MB, givenSemiSpaceMb, planYoungGeneration } from '../../src/runtime/young-generation.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const shipped = ['--max-semi-space-size=1', '--max-old-space-size=512'];

describe('givenSemiSpaceMb', () => {
  it('reads the last flag of the command line, else of NODE_OPTIONS', () => {
    expect(givenSemiSpaceMb(shipped, undefined)).toBe(1);
    expect(givenSemiSpaceMb(['--max-semi-space-size=1', '--max_semi_space_size=16'], undefined)).toBe(16);
    expect(givenSemiSpaceMb(['--max-semi-space-size', '8'], undefined)).toBe(8);
    expect(givenSemiSpaceMb([], '--max-old-space-size=512  --max-semi-space-size=2')).toBe(2);
    expect(givenSemiSpaceMb(['--max-semi-space-size=1'], '--max-semi-space-size=2')).toBe(1);
    expect(givenSemiSpaceMb(['--inspect'], '')).toBeUndefined();
  });

  it('the shipped size is the one the executable, the image and the systemd unit pass', () => {
    const shebang = readFileSync(path.join(root, 'src/cli/main.ts'), 'utf8').split('\n', 1)[0]!;
    expect(givenSemiSpaceMb(shebang.split(' '), undefined)).toBe(SHIPPED_SEMI_SPACE_MB);
    const docker = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    expect(givenSemiSpaceMb([], /NODE_OPTIONS="([^"]*)"/.exec(docker)?.[1])).toBe(SHIPPED_SEMI_SPACE_MB);
  });
});

describe('planYoungGeneration', () => {
  const many = LARGE_FROM_MODELS;

  it('raises the shipped size from the threshold on, keeping the other flags', () => {
    expect(planYoungGeneration({ models: many - 1, execArgv: shipped, env: {} })).toBeUndefined();
    expect(planYoungGeneration({ models: many, execArgv: shipped, env: {} })).toEqual({ semiSpaceMb: LARGE_SEMI_SPACE_MB, execArgv: ['--max-old-space-size=512', `--max-semi-space-size=${LARGE_SEMI_SPACE_MB}`] });
    expect(planYoungGeneration({ models: many, execArgv: ['--max-semi-space-size', '1', '--inspect'], env: {} })?.execArgv).toEqual(['--inspect', `--max-semi-space-size=${LARGE_SEMI_SPACE_MB}`]);
  });

  it('raises it for a large config file before it is read, whatever it turns out to hold', () => {
    const raised = { semiSpaceMb: LARGE_SEMI_SPACE_MB, execArgv: ['--max-old-space-size=512', `--max-semi-space-size=${LARGE_SEMI_SPACE_MB}`] };
    expect(planYoungGeneration({ models: undefined, configBytes: LARGE_FROM_CONFIG_BYTES - 1, execArgv: shipped, env: {} })).toBeUndefined();
    expect(planYoungGeneration({ models: undefined, configBytes: undefined, execArgv: shipped, env: {} })).toBeUndefined();
    expect(planYoungGeneration({ models: undefined, configBytes: LARGE_FROM_CONFIG_BYTES, execArgv: shipped, env: {} })).toEqual(raised);
    expect(planYoungGeneration({ models: 10, configBytes: LARGE_FROM_CONFIG_BYTES, execArgv: shipped, env: {} })).toEqual(raised);
    expect(planYoungGeneration({ models: undefined, configBytes: LARGE_FROM_CONFIG_BYTES, execArgv: shipped, env: { MLS_YOUNG_GENERATION: 'raised' } })).toBeUndefined();
    expect(planYoungGeneration({ models: undefined, configBytes: LARGE_FROM_CONFIG_BYTES, execArgv: ['--max-semi-space-size=2'], env: {} })).toBeUndefined();
  });

  it('keeps the shipped size for a config of 1,000 models written out in JSON', () => {
    const text = JSON.stringify({ models: Array.from({ length: 1_000 }, (_, i) => ({ id: `model-${String(i).padStart(5, '0')}` })) }, null, 2);
    expect(planYoungGeneration({ models: undefined, configBytes: Buffer.byteLength(text), execArgv: shipped, env: {} })).toBeUndefined();
  });

  it('raises the shipped size set through NODE_OPTIONS (the image, the systemd unit) with a flag on the command line', () => {
    expect(planYoungGeneration({ models: many, execArgv: [], env: { NODE_OPTIONS: shipped.join(' ') } })?.execArgv).toEqual([`--max-semi-space-size=${LARGE_SEMI_SPACE_MB}`]);
  });

  it("leaves an operator's size, node's default, and MLS_YOUNG_GENERATION alone", () => {
    expect(planYoungGeneration({ models: many, execArgv: ['--max-semi-space-size=2'], env: {} })).toBeUndefined();
    expect(planYoungGeneration({ models: many, execArgv: shipped, env: { NODE_OPTIONS: '--max-semi-space-size=1' }, })).toBeDefined();
    expect(planYoungGeneration({ models: many, execArgv: [], env: { NODE_OPTIONS: '--max-semi-space-size=8' } })).toBeUndefined();
    expect(planYoungGeneration({ models: many, execArgv: [], env: {} })).toBeUndefined();
    expect(planYoungGeneration({ models: many, execArgv: shipped, env: { MLS_YOUNG_GENERATION: 'keep' } })).toBeUndefined();
    // Set by the restart itself: never a second one.
    expect(planYoungGeneration({ models: many, execArgv: shipped, env: { MLS_YOUNG_GENERATION: 'raised' } })).toBeUndefined();
  });
});
