// The scale benchmark's load, shared by bench/scale.js and bench/pair-scale.js: 10,000
// models, some of them active at 5 entries a second each, entries visible 0–0.5 s after
// their time; the daemon at `rate_limit: 1200/s` with one file per model.
import { join } from 'node:path';
import { startSimChild } from './sim.js';
import { TOKEN, baseConfig } from './util.js';

export const SCALE_MODELS = 10_000;
/** Entries per second of each active model. */
export const SCALE_RATE = 5;

/** The model ids, and every (SCALE_MODELS / active)-th of them active (none when `active` is 0). */
export function scaleModels(active) {
  const ids = Array.from({ length: SCALE_MODELS }, (_, i) => `scale-${String(i).padStart(5, '0')}`);
  return { ids, active: active > 0 ? ids.filter((_, i) => i % Math.round(SCALE_MODELS / active) === 0) : [] };
}

/** Starts the simulator (its own process) serving `ids`, with `active` logging. */
export function startScaleSim(ids, active) {
  return startSimChild(
    {
      token: TOKEN,
      models: ids,
      ratePerSec: 0,
      ratePerModel: Object.fromEntries(active.map((id) => [id, SCALE_RATE])),
      ingestDelayMs: { min: 0, max: 500 },
      pageSize: 500,
      seed: 23,
    },
    { heapMb: 2048 },
  );
}

/** The daemon's config for the load: state and output under `dir`; `extra` is merged in (e.g. `admin`). */
export function scaleConfig(simUrl, dir, ids, extra = {}) {
  return baseConfig(simUrl, join(dir, 'state', 'state.db'), {
    // 1,200 requests/s at a few ms each need more than the default 8 in flight.
    poll: { start_at: 'now', rate_limit: '1200/s', concurrency: 32 },
    models: ids.map((id) => ({ id })),
    sinks: [{ name: 'files', type: 'file', path: join(dir, 'out', '{model_id}.ndjson') }],
    ...extra,
  });
}
