//! Shared pieces of the webhook sink tests: parsed configs, contexts and batches.
import type { WebhookSinkConfig } from '../../../src/sinks/webhook/config.js';
import { loadedSinkBlock } from '../../helpers/loaded-sink.js';
import type { SinkBatch, SinkContext, SinkEntry } from '../../../src/sinks/contract.js';
import { parseEntryTime } from '../../../src/time/timestamp.js';

/** A webhook sink block as the config layer parses it (durations in ms). */
export function webhookConfig(url: string, over: Record<string, unknown> = {}): WebhookSinkConfig {
  return loadedSinkBlock<WebhookSinkConfig>({ name: 'hook', type: 'webhook', url, ...over });
}

/** A log record captured by {@link captureContext}. */
export interface LogRecord {
  level: string;
  obj: object;
  msg: string | undefined;
}

/** A context whose logger keeps every record. */
export function captureContext(name = 'hook', now: () => number = Date.now): { ctx: SinkContext; logs: LogRecord[] } {
  const logs: LogRecord[] = [];
  const log = (level: string) => (obj: object, msg?: string) => void logs.push({ level, obj, msg });
  return { ctx: { name, state: undefined, now, logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') } }, logs };
}

/** Entry `seq` of `model`, with a log line that names it; `timeNs` is its `time`, read by the real parser. */
export function entry(seq: number, over: Partial<SinkEntry> = {}): SinkEntry {
  const time = over.time ?? `2026-11-22T10:00:00.${String(seq).padStart(9, '0')}Z`;
  const parsed = parseEntryTime(time);
  if (!parsed.ok) throw new Error(`bad time ${time}`);
  return {
    seq,
    modelId: 'llama-3',
    time,
    timeNs: parsed.ns,
    stream: seq % 2 === 0 ? 'stdout' : 'stderr',
    log: `line ${seq}`,
    fetchedAtMs: 0,
    ...over,
  };
}

/** A batch of entries `first..last` with a stable id. */
export function batch(first: number, last: number, id = `hook-${first}-${last}`): SinkBatch {
  const entries: SinkEntry[] = [];
  for (let s = first; s <= last; s++) entries.push(entry(s));
  return { id, firstSeq: first, lastSeq: last, entries };
}

/** A signal that never aborts. */
export const never = new AbortController().signal;
