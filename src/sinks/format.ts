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

/** Whether JSON.stringify would write `s` between quotes unchanged. */
function plainJsonString(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 34 || c === 92 || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}

/**
 * Renders the lines of one model's entries exactly as {@link entryToNdjson} does, for the
 * journal's hot path: the model id is encoded once, the stream once per change, and the
 * time only when it holds a character JSON must escape.
 */
export class NdjsonLineBuilder {
  readonly #head: string;
  #stream = '';
  #streamJson = '""';

  constructor(modelId: string) {
    this.#head = '{"model_id":' + JSON.stringify(modelId) + ',"time":';
  }

  line(time: string, stream: string, log: string): string {
    if (stream !== this.#stream) {
      this.#stream = stream;
      this.#streamJson = JSON.stringify(stream);
    }
    const t = plainJsonString(time) ? '"' + time + '"' : JSON.stringify(time);
    return this.#head + t + ',"stream":' + this.#streamJson + ',"log":' + JSON.stringify(log) + '}\n';
  }
}
