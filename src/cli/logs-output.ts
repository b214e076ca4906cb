//! What `mls logs` prints: each entry as it came (the default), or, with `--process`, the
//! records the daemon's processing stages make of them (tracebacks whole, levels, JSON
//! fields), so that a person sees what would be shipped.
import type { LogEntry } from '../records/entry.js';
import { entryTimeNs, msToNs } from '../time/timestamp.js';
import { ModelProcessor, type ProcessedRecord } from '../processing/pipeline.js';
import { entryToNdjson } from '../records/ndjson.js';
import type { ProcessingConfig } from '../config/processing.js';
import { sinkProcessing } from '../delivery/processing/compile.js';

/** Output format of `mls logs`. */
export type LogsFormat = 'ndjson' | 'text';

/** Turns the entries `mls logs` admits into the text it prints. */
export interface LogsOutput {
  /** The entries of one page (already deduplicated), in the order the service gave them. */
  page(entries: readonly LogEntry[], windowToMs: number): string;
  /** The window read so far ends at `toMs`: what waited for later lines and can no longer get any. */
  advance(toMs: number): string;
  /** The end of the input: everything still held. */
  end(): string;
}

/** Prints every entry as it came. */
export function rawOutput(modelId: string, format: LogsFormat): LogsOutput {
  return {
    page: (entries) => entries.map((e) => formatEntry(modelId, e, format)).join(''),
    advance: () => '',
    end: () => '',
  };
}

function formatEntry(modelId: string, e: LogEntry, format: LogsFormat): string {
  if (format === 'text') return `${e.time} ${e.stream} ${e.log}\n`;
  return `${JSON.stringify({ model_id: modelId, time: e.time, stream: e.stream, log: e.log })}\n`;
}

/**
 * Prints the processed records: with the global rules of `processing` (a config's), else
 * the default ones. With processing off, the entries as they are, as the daemon ships them.
 */
export function processedOutput(modelId: string, format: LogsFormat, processing?: ProcessingConfig): LogsOutput {
  const stage = processing === undefined ? { processor: {} } : sinkProcessing(processing, { raw: false });
  if (stage === undefined) return rawOutput(modelId, format);
  const processor = new ModelProcessor({ ...stage.processor, modelId });
  let seq = 0;
  const print = (records: readonly ProcessedRecord[]) => records.map((r) => formatRecord(r, format)).join('');
  return {
    page(entries, windowToMs) {
      // An entry whose time does not parse is placed at the window's end, as the daemon keys it.
      const fallbackNs = msToNs(windowToMs);
      return print(processor.push(entries.map((e) => ({ seq: ++seq, time: e.time, timeNs: entryTimeNs(e.time) ?? fallbackNs, stream: e.stream, log: e.log }))).records);
    },
    advance: (toMs) => print(processor.advance(msToNs(toMs)).records),
    end: () => print(processor.flush().records),
  };
}

function formatRecord(r: ProcessedRecord, format: LogsFormat): string {
  if (format === 'ndjson') return entryToNdjson(r);
  return `${r.time} ${r.stream}${r.level ? ` ${r.level.toUpperCase()}` : ''} ${r.log}\n`;
}
