//! Checks of the config as written that span several sections or entries: the token given
//! twice, ids and names that must be unique, models that sinks name. (Checks within one
//! section are the schema's: fields.ts `inOrder`.) They run on the raw (interpolated) input,
//! so they are reported along with the problems of the fields themselves.
import { isObj, type Obj } from './interpolate.js';
import type { RawProblem } from './problems.js';
import { show } from './units.js';

/**
 * Checks that span several fields, on the raw (interpolated) input, so they run even when
 * other fields are broken. `checkSink` adds the checks of one sink block that its type
 * knows (paths below the block).
 */
export function crossCheck(raw: Obj, checkSink?: (block: Obj) => RawProblem[]): RawProblem[] {
  const problems: RawProblem[] = [];
  const api = isObj(raw.api) ? raw.api : undefined;
  if (api && api.token !== undefined && api.token_file !== undefined) {
    problems.push({ path: ['api', 'token_file'], message: 'is set together with api.token; set only one of them' });
  }

  const modelIds = new Map<string, number>();
  if (Array.isArray(raw.models)) {
    raw.models.forEach((m, i) => {
      if (!isObj(m) || typeof m.id !== 'string' || m.id.trim() === '') return;
      const first = modelIds.get(m.id);
      if (first !== undefined) {
        problems.push({ path: ['models', i, 'id'], message: `${show(m.id)} is already the id of models[${first}]; model ids must be unique` });
      } else {
        modelIds.set(m.id, i);
      }
    });
  }

  if (Array.isArray(raw.sinks)) {
    const names = new Map<string, number>();
    raw.sinks.forEach((s, i) => {
      if (!isObj(s)) return;
      if (typeof s.name === 'string' && s.name !== '') {
        const first = names.get(s.name);
        if (first !== undefined) {
          problems.push({ path: ['sinks', i, 'name'], message: `${show(s.name)} is already the name of sinks[${first}]; sink names must be unique` });
        } else {
          names.set(s.name, i);
        }
      }
      if (Array.isArray(s.models) && Array.isArray(raw.models)) {
        const seen = new Set<string>();
        s.models.forEach((id, j) => {
          if (typeof id !== 'string' || id.trim() === '') return;
          if (!modelIds.has(id)) {
            // A models_file may list thousands: name a few.
            const known = [...modelIds.keys()];
            const some = known.length > 10 ? `${known.slice(0, 10).join(', ')}, ... (${known.length} in all)` : known.join(', ');
            problems.push({
              path: ['sinks', i, 'models', j],
              message: `${show(id)} is not a configured model id; use one of ${known.length > 0 ? some : '(none configured)'}`,
            });
          } else if (seen.has(id)) {
            problems.push({ path: ['sinks', i, 'models', j], message: `${show(id)} is listed twice; remove the duplicate` });
          }
          seen.add(id);
        });
      }
      if (checkSink) for (const p of checkSink(s)) problems.push({ path: ['sinks', i, ...p.path], message: p.message });
    });
  }
  return problems;
}
