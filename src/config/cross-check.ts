//! Checks of the config as written that span several fields: the token given twice,
//! backoffs whose bound is below their start, windows that could not advance, ids and names
//! that must be unique, models that sinks name. They run on the raw (interpolated) input,
//! so they are reported along with the problems of the fields themselves.
import { isObj, type Obj } from './interpolate.js';
import type { RawProblem } from './problems.js';
import { Fail, parseDurationValue, show } from './units.js';


/**
 * Checks that span several fields, on the raw (interpolated) input, so they run even when
 * other fields are broken. `checkSink` adds the checks of one sink block that its type
 * knows (paths below the block).
 */
export function crossCheck(raw: Obj, checkSink?: (block: Obj) => RawProblem[]): RawProblem[] {
  const problems: RawProblem[] = [];
  const dur = (v: unknown, dflt: string): number | undefined => {
    const r = parseDurationValue(v ?? dflt);
    return r instanceof Fail ? undefined : r;
  };

  const api = isObj(raw.api) ? raw.api : undefined;
  if (api && api.token !== undefined && api.token_file !== undefined) {
    problems.push({ path: ['api', 'token_file'], message: 'is set together with api.token; set only one of them' });
  }
  if (api && isObj(api.retry)) {
    const base = dur(api.retry.base_delay, '250ms');
    const max = dur(api.retry.max_delay, '30s');
    if (base !== undefined && max !== undefined && max < base) {
      problems.push({ path: ['api', 'retry', 'max_delay'], message: 'is shorter than api.retry.base_delay; raise max_delay or lower base_delay' });
    }
  }

  const poll = isObj(raw.poll) ? raw.poll : raw.poll === undefined ? {} : undefined;
  if (poll) {
    const lookback = dur(poll.lookback, '5m');
    const maxWindow = dur(poll.max_window, '1h');
    if (lookback !== undefined && maxWindow !== undefined && lookback >= maxWindow) {
      problems.push({
        path: ['poll', 'lookback'],
        message: `must be shorter than poll.max_window, otherwise poll windows could not advance (lookback ${show(poll.lookback ?? '5m')}, max_window ${show(poll.max_window ?? '1h')}); lower lookback or raise max_window`,
      });
    }
    const interval = dur(poll.interval, '10s');
    const minInterval = poll.min_interval === undefined ? undefined : dur(poll.min_interval, '1s');
    if (interval !== undefined && minInterval !== undefined && minInterval > interval) {
      problems.push({
        path: ['poll', 'min_interval'],
        message: `is longer than poll.interval (min_interval ${show(poll.min_interval)}, interval ${show(poll.interval ?? '10s')}); a quiet model is polled every interval and an active one every min_interval, so lower min_interval or raise interval`,
      });
    }
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
      if (isObj(s.retry)) {
        const base = dur(s.retry.base_delay, '500ms');
        const max = dur(s.retry.max_delay, '60s');
        if (base !== undefined && max !== undefined && max < base) {
          problems.push({ path: ['sinks', i, 'retry', 'max_delay'], message: 'is shorter than retry.base_delay; raise max_delay or lower base_delay' });
        }
      }
      if (checkSink) for (const p of checkSink(s)) problems.push({ path: ['sinks', i, ...p.path], message: p.message });
    });
  }
  return problems;
}
