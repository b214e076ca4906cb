//! The fields every sink block takes, whatever its type: its name, its batches, the backoff
//! of its retries and the models it receives. A sink type adds its own fields to these.
import { z } from 'zod';
import { Fail, show } from './units.js';
import { duration, inOrder, leaf, scalar, section, size, text } from './fields.js';
import { sinkProcessingFields } from './processing.js';

const sinkName = leaf<string>(
  'Unique name of the sink: letters, digits, _ and -. Used in metrics, logs and state.',
  { type: 'string', pattern: '^[A-Za-z0-9_-]+$' },
  (v) => {
    if (typeof v !== 'string' || v === '') return new Fail(`expected a non-empty string, got ${show(v)}`);
    if (!/^[A-Za-z0-9_-]+$/.test(v)) return new Fail(`${show(v)} is not a valid sink name; use only letters, digits, _ and -`);
    return v;
  },
);

/** The default size of a sink's batches. */
export interface BatchDefaults {
  maxEntries: number;
  maxBytes: string;
}

/**
 * The fields every sink takes. A batch is what a network sink sends in one request, so
 * its default size suits receivers' limits; for a sink that writes locally it is only the
 * unit of a write and an fsync, so its default is larger: a sink that has fallen behind
 * catches up in a few large writes instead of many small ones, each waiting its turn.
 */
export const sinkFields = (batch: BatchDefaults) => ({
  name: sinkName,
  batch: section('How entries are grouped before they are sent.', {
    max_entries: scalar(z.number().int().min(1).default(batch.maxEntries)).describe('Most entries in one batch.'),
    max_bytes: size('Most bytes (of log text) in one batch.', { positive: true }).prefault(batch.maxBytes),
    max_delay: duration('Longest time an entry waits for its batch to fill.', { positive: true }).prefault('1s'),
  }),
  retry: section('Backoff between attempts to send a batch that failed.', {
    base_delay: duration('First delay after a failed send; doubles on each attempt.', { positive: true }).prefault('500ms'),
    max_delay: duration('Upper bound of the delay between attempts.', { positive: true }).prefault('60s'),
  }).check(inOrder('base_delay', 'max_delay', { at: 'max_delay', message: () => 'is shorter than retry.base_delay; raise max_delay or lower base_delay' })),
  models: z
    .array(text('A configured model id.'))
    .min(1)
    .optional()
    .describe('Only these models go to this sink (each must be a configured model id). All models when not set.'),
  ...sinkProcessingFields,
});

/** Batches that are requests (network and module sinks): at most 1,000 entries or 1 MiB of text. */
export const REQUEST_BATCHES: BatchDefaults = { maxEntries: 1000, maxBytes: '1MiB' };
/** Batches that are only writes (sinks writing locally): at most 20,000 entries or 8 MiB of text. */
export const WRITE_BATCHES: BatchDefaults = { maxEntries: 20_000, maxBytes: '8MiB' };

/** What the config knows of any sink block once parsed. */
export interface SinkBlock {
  type: string;
  name: string;
  batch: { max_entries: number; max_bytes: number; max_delay: number };
  retry: { base_delay: number; max_delay: number };
  models?: string[] | undefined;
  /** One record per entry as the journal holds it (redaction only). */
  raw: boolean;
  /** This sink's filter, instead of the `processing` section's. */
  drop?: { match: string }[] | undefined;
  min_level?: string | undefined;
}
