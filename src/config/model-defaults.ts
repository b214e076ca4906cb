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
  const keys: Set<string>[] = [];
  const fields: Set<string>[] = [];
  const models = raw.models.map((m, i) => {
    keys[i] = new Set();
    fields[i] = new Set();
    if (!isObj(m)) return m;
    const out: Obj = { ...m };
    for (const [k, v] of Object.entries(defaults)) {
      if (k === 'id') continue; // refused at model_defaults.id by the schema
      if (k === 'settings' && isObj(v) && isObj(m.settings)) {
        for (const f of Object.keys(v)) if (!(f in m.settings)) fields[i]!.add(f);
        out.settings = { ...v, ...m.settings };
      } else if (m[k] === undefined) {
        out[k] = v;
        keys[i]!.add(k);
      }
    }
    return out;
  });
  return {
    value: { ...raw, models },
    inherited: (path) => {
      if (path[0] !== 'models' || typeof path[1] !== 'number') return false;
      const [, i, key, field] = path as [string, number, PathSegment?, PathSegment?];
      if (typeof key !== 'string') return false;
      if (keys[i]?.has(key)) return true;
      return key === 'settings' && typeof field === 'string' && fields[i]?.has(field) === true;
    },
  };
}
