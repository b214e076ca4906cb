//! Shared pieces of the OTLP sink tests: parsed configs, entries and a capturing logger.
import { Writable } from 'node:stream';
import type { OtlpSinkConfig } from '../../../src/sinks/otlp/config.js';
import { loadedSinkBlock } from '../../helpers/loaded-sink.js';
import type { SinkBatch, SinkContext, SinkEntry } from '../../../src/sinks/contract.js';
import type { RecordFields } from '../../../src/records/entry.js';
import { createLogger, type Logger } from '../../../src/telemetry/logger.js';
import { parseEntryTime } from '../../../src/time/timestamp.js';

/** An OTLP sink block parsed by the real schema (durations in ms, defaults applied). */
export function otlpConfig(block: Record<string, unknown>): OtlpSinkConfig {
  return loadedSinkBlock<OtlpSinkConfig>({ type: 'otlp', name: 'otel', ...block });
}

/** A journal entry; `timeNs` comes from the real timestamp parser. */
export function entry(seq: number, fields: Partial<Pick<SinkEntry, 'modelId' | 'time' | 'stream' | 'log' | 'fetchedAtMs'>> = {}): SinkEntry {
  const time = fields.time ?? '2026-11-22T10:00:00.123456789Z';
  const parsed = parseEntryTime(time);
  if (!parsed.ok) throw new Error(`bad time ${time}`);
  return {
    seq,
    modelId: fields.modelId ?? 'model-a',
    time,
    timeNs: parsed.ns,
    stream: fields.stream ?? 'stdout',
    log: fields.log ?? `line ${seq}`,
    fetchedAtMs: fields.fetchedAtMs ?? 1_795_341_601_250,
  };
}

/** A processed record: an entry with the fields processing adds. */
export function record(seq: number, fields: Partial<Pick<SinkEntry, 'modelId' | 'time' | 'stream' | 'log' | 'fetchedAtMs'>> & RecordFields): SinkEntry {
  const { modelId, time, stream, log, fetchedAtMs, ...added } = fields;
  const base = entry(seq, {
    ...(modelId !== undefined ? { modelId } : {}),
    ...(time !== undefined ? { time } : {}),
    ...(stream !== undefined ? { stream } : {}),
    ...(log !== undefined ? { log } : {}),
    ...(fetchedAtMs !== undefined ? { fetchedAtMs } : {}),
  });
  return { ...base, ...added };
}

/** A batch of the given entries. */
export function batchOf(entries: SinkEntry[]): SinkBatch {
  return { id: `otel:${entries[0]!.seq}-${entries[entries.length - 1]!.seq}`, firstSeq: entries[0]!.seq, lastSeq: entries[entries.length - 1]!.seq, entries };
}

/** A real (scrubbing) pino logger whose output is kept in memory. */
export function capturingLogger(): { logger: Logger; text(): string } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString('utf8'));
      cb();
    },
  });
  const logger = createLogger({ level: 'trace', destination: sink });
  return { logger, text: () => chunks.join('') };
}

/** A sink context around a logger. */
export function context(logger: Logger, name = 'otel'): SinkContext {
  return { name, state: undefined, now: Date.now, logger };
}
