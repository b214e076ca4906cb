//! A custom sink module (`type: module`) that breaks the sink contract on purpose, written
//! into a test's folder. It misbehaves in one chosen way until it is healed (after its first
//! `badCalls` sends, or once `healFile` exists), then delivers properly: each entry it takes
//! is recorded, in memory and optionally as an NDJSON line in `out`.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The ways the module misbehaves. */
export const HOSTILE_MODES = [
  'undefined', // send resolves to undefined
  'null', // send resolves to null
  'reject-without-error', // {status: 'reject'} with no error
  'state-not-a-string', // {status: 'ok', state: {…}}
  'unknown-status', // {status: 'later'}
  'after-1e12', // {status: 'retry', afterMs: 1e12, error}
  'throw', // send throws
  'hang', // send never settles and ignores its signal
] as const;
export type HostileMode = (typeof HOSTILE_MODES)[number];

/** Options the module takes (`options` of the sink's config). */
export interface HostileOptions {
  mode: HostileMode;
  /** Misbehave for this many sends, then behave. */
  badCalls?: number;
  /** Or: misbehave until this file exists. */
  healFile?: string;
  /** Append each delivered entry here as NDJSON ({model_id, time, stream, log}). */
  out?: string;
  /** In `hang` mode, also keep a timer running, as a module with an open socket would. */
  holdProcess?: boolean;
}

/** What the module's sink object exposes to an in-process test. */
export interface HostileSinkState {
  /** Wall-clock ms of every send call. */
  calls: number[];
  /** Log texts of the entries delivered, in order. */
  delivered: string[];
  /** How many times a signal passed to a hanging send fired. */
  aborts: number;
}

const SOURCE = `
import { appendFileSync, existsSync } from 'node:fs';

export default function createSink(options) {
  const badCalls = options.badCalls ?? Infinity;
  const sink = {
    calls: [],
    delivered: [],
    aborts: 0,
    async healthcheck() { return { ok: true }; },
    send(batch, signal) {
      sink.calls.push(Date.now());
      const healed = options.healFile ? existsSync(options.healFile) : sink.calls.length > badCalls;
      if (!healed) return misbehave(signal);
      const lines = [];
      for (const e of batch.entries) {
        sink.delivered.push(e.log);
        lines.push(JSON.stringify({ model_id: e.modelId, time: e.time, stream: e.stream, log: e.log }) + '\\n');
      }
      if (options.out) appendFileSync(options.out, lines.join(''));
      return Promise.resolve({ status: 'ok' });
    },
    async flush() {},
    async close() {},
  };
  function misbehave(signal) {
    switch (options.mode) {
      case 'undefined': return Promise.resolve(undefined);
      case 'null': return Promise.resolve(null);
      case 'reject-without-error': return Promise.resolve({ status: 'reject' });
      case 'state-not-a-string': return Promise.resolve({ status: 'ok', state: { offset: 42 } });
      case 'unknown-status': return Promise.resolve({ status: 'later' });
      case 'after-1e12': return Promise.resolve({ status: 'retry', afterMs: 1e12, error: 'come back in 31 years' });
      case 'throw': throw new Error('the plugin has a bug');
      case 'hang':
        signal.addEventListener('abort', () => { sink.aborts++; });
        if (options.holdProcess) setInterval(() => {}, 1000);
        return new Promise(() => {});
      default: throw new Error('unknown mode ' + options.mode);
    }
  }
  return sink;
}
`;

/** Writes the module into `dir` and returns its path. */
export function writeHostileSink(dir: string): string {
  const path = join(dir, 'hostile-sink.mjs');
  writeFileSync(path, SOURCE);
  return path;
}
