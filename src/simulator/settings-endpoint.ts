//! The *update model settings* operation of the simulated service: the fields the spec
//! names, each checked for its type; an accepted update is recorded for tests to read.
import type { IncomingMessage } from 'node:http';
import { checkRequest, errorAnswer, type Answer } from './http.js';
import type { ResolvedOptions } from './options.js';
import type { ModelLog } from './store.js';

/** One accepted settings update. */
export interface SettingsUpdate {
  modelId: string;
  data: Record<string, unknown>;
  atMs: number;
}

const INTEGER_FIELDS = new Set(['min_replica', 'max_replica', 'scale_down_delay', 'inference_time', 'container_concurrency']);
const BOOLEAN_FIELDS = new Set(['is_dedicated', 'is_input_output_enabled']);
const STRING_FIELDS = new Set(['machine_type']);

/** A settings request that reached the service's checks, whatever its answer. */
export interface SettingsCall {
  /** The model_id sent (a string, or undefined when it was not one). */
  modelId: string | undefined;
  /** The data object sent, as it was. */
  data: unknown;
  /** The HTTP status answered. */
  status: number;
  atMs: number;
}

/** What the settings operation answers for the models told to fail (a test hook). */
export interface SettingsFailure {
  status: number;
  details: string;
}

/**
 * Answers one settings request whose body is `raw`; an accepted update goes to `updates`
 * once the answer is sent. Every request whose body could be read is added to `calls`.
 */
export function answerSettings(
  req: IncomingMessage,
  raw: string,
  o: {
    /** The token, and how unknown models are answered. */
    options: ResolvedOptions;
    models: ReadonlyMap<string, ModelLog>;
    now(): number;
    updates: SettingsUpdate[];
    calls: SettingsCall[];
    failing: ReadonlyMap<string, SettingsFailure>;
  },
): Answer {
  const answer = check(req, raw, o);
  let body: { model_id?: unknown; data?: unknown } = {};
  try {
    body = JSON.parse(raw) as typeof body;
  } catch {
    // recorded with what could be read: nothing
  }
  o.calls.push({ modelId: typeof body?.model_id === 'string' ? body.model_id : undefined, data: body?.data, status: answer.status, atMs: o.now() });
  return answer;
}

function check(req: IncomingMessage, raw: string, o: Parameters<typeof answerSettings>[2]): Answer {
  const request = checkRequest(req, raw, o.options, o.models);
  if ('status' in request) return request;
  const { body, model } = request;
  const failure = o.failing.get(model.id);
  if (failure) return errorAnswer(failure.status, failure.details);
  const data = body.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return errorAnswer(400, 'data must be an object');
  for (const [k, v] of Object.entries(data)) {
    if (INTEGER_FIELDS.has(k)) {
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) return errorAnswer(400, `${k} must be a non-negative integer`);
    } else if (BOOLEAN_FIELDS.has(k)) {
      if (typeof v !== 'boolean') return errorAnswer(400, `${k} must be a boolean`);
    } else if (STRING_FIELDS.has(k)) {
      if (typeof v !== 'string' || v === '') return errorAnswer(400, `${k} must be a non-empty string`);
    } else {
      return errorAnswer(400, `Unknown field in data: ${k}`);
    }
  }
  const record: SettingsUpdate = { modelId: model.id, data: { ...(data as Record<string, unknown>) }, atMs: o.now() };
  return {
    status: 200,
    body: JSON.stringify({ status: 'success', details: `Model ${model.id} updated successfully.` }),
    commit: () => o.updates.push(record),
  };
}
