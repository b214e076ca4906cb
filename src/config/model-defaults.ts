//! `model_defaults`: defaults of every per-model key, merged into each entry of `models` as
//! written, before validation. A model's own value wins; `settings` merge field by field.
//! A default that is wrong is reported once, at `model_defaults.…`, not again for every
//! model that inherits it.
import { isObj, type Obj, type PathSegment } from './interpolate.js';

/** The config with defaults merged into its models, and which values came from the defaults. */
export interface MergedDefaults {
  value: Obj;
  /** Whether the problem at `path` is about a value a model took from `model_defaults`. */
  inherited(path: readonly PathSegment[]): boolean;
}

/** Merges `raw.model_defaults` into each entry of `raw.models` (a new object; `raw` is left as it is). */
export function applyModelDefaults(raw: Obj): MergedDefaults {
  const defaults = raw.model_defaults;
  if (!isObj(defaults) || !Array.isArray(raw.models)) return { value: raw, inherited: () => false };
  // `i key` and `i settings field` of each value model i took from the defaults
  const taken = new Set<string>();
  const models = raw.models.map((m, i) => {
    if (!isObj(m)) return m;
    const out: Obj = { ...m };
    for (const [k, v] of Object.entries(defaults)) {
      if (k === 'id') continue; // refused at model_defaults.id by the schema
      if (k === 'settings' && isObj(v) && isObj(m.settings)) {
        for (const f of Object.keys(v)) if (!(f in m.settings)) taken.add(`${i} settings ${f}`);
        out.settings = { ...v, ...m.settings };
      } else if (m[k] === undefined) {
        out[k] = v;
        taken.add(`${i} ${k}`);
      }
    }
    return out;
  });
  return {
    value: { ...raw, models },
    inherited: ([section, i, key, field]) => {
      if (section !== 'models' || typeof i !== 'number' || typeof key !== 'string') return false;
      return taken.has(`${i} ${key}`) || (key === 'settings' && typeof field === 'string' && taken.has(`${i} settings ${field}`));
    },
  };
}
