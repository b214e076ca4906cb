//! The records meter: each model counted by one sink only, and its exception types bounded by
//! `processing.exceptions.max_types_per_model` (the first met keep a series, the rest are `other`).
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/cli/config.js';
import type { Config } from '../../src/config/index.js';
import { RecordsMeter } from '../../src/daemon/records-meter.js';
import { Metrics } from '../../src/telemetry/metrics.js';
import { minimal } from '../config/config-fixture.js';

function config(processing: unknown = undefined): Config {
  return parseConfig(
    {
      ...minimal(),
      models: [{ id: 'a' }, { id: 'b' }],
      sinks: [
        { name: 'raw', type: 'stdout', raw: true },
        { name: 'first', type: 'stdout' },
        { name: 'second', type: 'stdout' },
      ],
      ...(processing === undefined ? {} : { processing }),
    },
    { env: {} },
  );
}

async function exceptionSeries(metrics: Metrics): Promise<Record<string, number>> {
  const m = await metrics.registry.getSingleMetric('mls_model_exceptions_total')!.get();
  return Object.fromEntries(m.values.map((v) => [`${v.labels.model} ${v.labels.type}`, v.value]));
}

describe('RecordsMeter', () => {
  it('counts a model by the first sink that processes it', () => {
    const meter = new RecordsMeter(new Metrics({ processMetrics: false }), () => config());
    expect(['raw', 'first', 'second'].filter((s) => meter.counts(s, 'a'))).toEqual(['first']);
  });

  it('gives at most max_types_per_model exception types a series per model, the first met, and counts the rest as other', async () => {
    let current = config({ exceptions: { max_types_per_model: 2 } });
    const metrics = new Metrics({ processMetrics: false });
    const meter = new RecordsMeter(metrics, () => current);
    meter.exception('a', 'KeyError', 2);
    meter.exception('a', 'torch.OutOfMemoryError', 1);
    meter.exception('a', 'ValueError', 3);
    meter.exception('a', 'KeyError', 1);
    meter.exception('a', 'json.decoder.JSONDecodeError', 1);
    meter.exception('b', 'ValueError', 1);
    expect(await exceptionSeries(metrics)).toEqual({ 'a KeyError': 3, 'a torch.OutOfMemoryError': 1, 'a other': 4, 'b ValueError': 1 });
    // A reload that raises the bound lets new types in; one that lowers it keeps the series there are.
    current = config({ exceptions: { max_types_per_model: 3 } });
    meter.exception('a', 'ValueError', 1);
    meter.exception('a', 'RuntimeError', 1);
    current = config({ exceptions: { max_types_per_model: 0 } });
    meter.exception('a', 'KeyError', 1);
    meter.exception('b', 'KeyError', 1);
    expect(await exceptionSeries(metrics)).toEqual({ 'a KeyError': 4, 'a torch.OutOfMemoryError': 1, 'a ValueError': 1, 'a other': 5, 'b ValueError': 1, 'b other': 1 });
  });

  it('keeps 20 types per model by default', async () => {
    const metrics = new Metrics({ processMetrics: false });
    const meter = new RecordsMeter(metrics, () => config());
    for (let i = 0; i < 25; i++) meter.exception('a', `app.Error${i}`, 1);
    const series = await exceptionSeries(metrics);
    expect(Object.keys(series)).toHaveLength(21);
    expect(series['a other']).toBe(5);
  });
});
