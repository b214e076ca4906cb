//! models[].settings, model_defaults and settings_apply: values as the service takes them,
//! defaults merged (settings field by field), and every problem with its path.
import { describe, expect, test } from 'vitest';
import { parseConfig } from '../../src/cli/config.js';
import { ConfigError, ExitCode } from '../../src/errors.js';

const base = () => ({
  api: { base_url: 'https://api.example.com', token: 'test-token' },
  sinks: [{ name: 'console', type: 'stdout' }],
});

function problemsOf(raw: unknown, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseConfig(raw, { env });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).exitCode).toBe(ExitCode.config);
    return [...(err as ConfigError).problems];
  }
  throw new Error('expected a ConfigError');
}

describe('models[].settings', () => {
  test('the eight fields, durations as integer seconds, strings from interpolation as numbers', () => {
    const c = parseConfig(
      {
        ...base(),
        models: [
          {
            id: 'a',
            settings: {
              min_replica: 0,
              max_replica: '${MAXR}',
              scale_down_delay: '5m',
              inference_time: 90,
              is_dedicated: false,
              machine_type: 'gpu-a10',
              container_concurrency: 4,
              is_input_output_enabled: 'true',
            },
          },
          { id: 'b' },
        ],
      },
      { env: { MAXR: '3' } },
    );
    expect(c.models[0]!.settings).toEqual({
      min_replica: 0,
      max_replica: 3,
      scale_down_delay: 300,
      inference_time: 90,
      is_dedicated: false,
      machine_type: 'gpu-a10',
      container_concurrency: 4,
      is_input_output_enabled: true,
    });
    expect(c.models[1]).not.toHaveProperty('settings');
    expect(c.settings_apply).toBe('off');
  });

  test('every bad value is named by its path, at once', () => {
    const problems = problemsOf({
      ...base(),
      settings_apply: 'always',
      models: [
        {
          id: 'a',
          settings: { min_replica: -1, max_replica: 1.5, scale_down_delay: '1.5s', inference_time: '-5m', is_dedicated: 'yes', machine_type: '', container_concurrency: 'four', replicas: 2 },
        },
      ],
    });
    const at = (path: string) => problems.find((p) => p.startsWith(`${path}: `));
    expect(at('settings_apply')).toContain('use one of off, on_reload');
    expect(at('models[0].settings.min_replica')).toContain('the minimum is 0');
    expect(at('models[0].settings.max_replica')).toContain('expected a whole number');
    expect(at('models[0].settings.scale_down_delay')).toContain('not a whole number of seconds');
    expect(at('models[0].settings.inference_time')).toContain('negative');
    expect(at('models[0].settings.is_dedicated')).toContain('expected true or false');
    expect(at('models[0].settings.machine_type')).toContain('non-empty string');
    expect(at('models[0].settings.container_concurrency')).toContain('expected a number');
    expect(at('models[0].settings.replicas')).toContain('unknown key');
    expect(problems).toHaveLength(9);
  });

  test('min_replica above max_replica is refused after merging, wherever each came from', () => {
    expect(problemsOf({ ...base(), model_defaults: { settings: { min_replica: 3 } }, models: [{ id: 'a', settings: { max_replica: 2 } }, { id: 'b', settings: { max_replica: 3 } }] })).toEqual([
      'models[0].settings.min_replica: 3 exceeds max_replica 2 (after model_defaults are merged); lower min_replica or raise max_replica',
    ]);
  });
});

describe('model_defaults', () => {
  test('defaults every per-model key; a model\'s own values win; settings merge field by field', () => {
    const c = parseConfig(
      {
        ...base(),
        model_defaults: { is_less_logs: true, start_at: 'now', resource: { team: 'ml' }, settings: { min_replica: 1, max_replica: 3, scale_down_delay: '10m' } },
        models: [
          { id: 'a', is_less_logs: false, resource: { team: 'search' }, settings: { max_replica: 8, machine_type: 'gpu' } },
          { id: 'b' },
        ],
      },
      { env: {} },
    );
    expect(c.models[0]).toEqual({
      id: 'a',
      is_less_logs: false,
      start_at: { kind: 'now' },
      resource: { team: 'search' },
      settings: { min_replica: 1, max_replica: 8, scale_down_delay: 600, machine_type: 'gpu' },
    });
    expect(c.models[1]).toEqual({ id: 'b', is_less_logs: true, start_at: { kind: 'now' }, resource: { team: 'ml' }, settings: { min_replica: 1, max_replica: 3, scale_down_delay: 600 } });
  });

  test('a bad default is said once, at model_defaults, however many models inherit it', () => {
    const problems = problemsOf({ ...base(), model_defaults: { id: 'x', is_less_logs: 'sometimes', settings: { max_replica: -2, typo_field: 1 } }, models: [{ id: 'a' }, { id: 'b', settings: { max_replica: 1 } }] });
    expect(problems).toHaveLength(4);
    expect(problems).toEqual(
      expect.arrayContaining([
        'model_defaults.id: unknown key; allowed keys: is_less_logs, start_at, settings, resource',
        'model_defaults.is_less_logs: expected true or false, got "sometimes"',
        'model_defaults.settings.max_replica: -2 is too small; the minimum is 0',
        expect.stringMatching(/^model_defaults\.settings\.typo_field: unknown key; allowed keys: min_replica, /),
      ]),
    );
  });
});
