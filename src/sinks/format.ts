//! The NDJSON line every sink that writes text emits for one entry.
import type { SinkEntry } from './contract.js';

/**
 * Renders one entry as a JSON object on one line, keys in the order
 * `model_id`, `time`, `stream`, `log`, followed by `\n`. `time` is the service's
 * string unchanged. Newlines inside `log` are escaped, so one entry is always one line.
 */
export function entryToNdjson(e: SinkEntry): string {
  // Built by hand: JSON.stringify of an object costs a property walk per entry on the hot path.
  return (
    '{"model_id":' +
    JSON.stringify(e.modelId) +
    ',"time":' +
    JSON.stringify(e.time) +
    ',"stream":' +
    JSON.stringify(e.stream) +
    ',"log":' +
    JSON.stringify(e.log) +
    '}\n'
  );
}
