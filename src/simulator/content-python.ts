//! The `python` content profile: what a Python model server writes, one line per entry. An
//! event (a burst) is one or more consecutive lines on one stream written moments apart: an
//! access line, a metrics line, a two-line warning, a start-up sequence, a traceback episode.
//! The store draws one content seed per event; the event's kind and shape are a pure function
//! of that seed, and each line is rendered on its own from (seed, line index, time), so that a
//! served entry costs one line's rendering whatever its place in the burst.
import { int, next, reseed } from './content-rng.js';
import {
  accessLine,
  asctimeLine,
  jsonLoggerLine,
  loggingDefaultLine,
  loguruLine,
  printLine,
  someWeightsLine,
  structlogLine,
  tqdmLine,
  transformersLine,
  uvicornStartLine,
  vllmLine,
  warningsLine,
} from './python-lines.js';
import { episode, episodeLine, episodeStream, layoutEpisode } from './python-traceback.js';

// Kinds of event, and their shares of all events (the remainder after the last is ACCESS).
const ACCESS = 0;
const VLLM = 1;
const LOGGING = 2;
const ASCTIME = 3;
const LOGURU = 4;
const STRUCTLOG = 5;
const JSON_LOGGER = 6;
const PRINT = 7;
const TRANSFORMERS = 8;
const WARNINGS = 9;
const SOME_WEIGHTS = 10;
const ERROR_LINE = 11;
const TRACEBACK = 12;
const STARTUP = 13;

/** [kind, share]; a kind's seeds are the interval of its share, so a kind can be forced on a seed. */
const SHARES: readonly (readonly [number, number])[] = [
  [VLLM, 0.13],
  [LOGGING, 0.11],
  [ASCTIME, 0.08],
  [LOGURU, 0.08],
  [STRUCTLOG, 0.07],
  [JSON_LOGGER, 0.05],
  [PRINT, 0.045],
  [TRANSFORMERS, 0.01],
  [WARNINGS, 0.008],
  [SOME_WEIGHTS, 0.002],
  [ERROR_LINE, 0.015],
  [TRACEBACK, 0.03],
  // A restart: rare, as its shards take seconds to load, during which the model writes nothing else.
  [STARTUP, 0.000_001],
];
const U32 = 4_294_967_296;
/** Upper bounds of the seeds of each kind in SHARES order; ACCESS takes the seeds from the last bound up. */
const BOUNDS: readonly number[] = (() => {
  let acc = 0;
  return SHARES.map(([, share]) => Math.floor((acc += share) * U32));
})();
const STARTUP_LOW = BOUNDS[BOUNDS.length - 2]!;
const STARTUP_HIGH = BOUNDS[BOUNDS.length - 1]!;

/** Most lines of one event; the store keeps a line's index in 6 bits. */
/** What the simulated models write: short service lines (`plain`) or a Python model server's output (`python`). */
export type ContentProfile = 'plain' | 'python';

export const MAX_EVENT_LINES = 63;

// The layout of the event last laid out (module state: laying out allocates nothing).
let laidOut = -1;
let kind = ACCESS;
let lines = 1;
/** STARTUP: checkpoint shards, seconds per shard, whether the weights warning shows, the pid. */
let shards = 0;
let secondsPerShard = 0;
let weightsWarning = false;
let pid = 0;
/** WARNINGS and SOME_WEIGHTS: which message. */
let which = 0;

function kindOf(seed: number): number {
  for (let k = 0; k < BOUNDS.length; k++) if (seed < BOUNDS[k]!) return SHARES[k]![0];
  return ACCESS;
}

/** A seed of a start-up event, derived from any seed (a model's first event is its start-up). */
export function startupSeed(seed: number): number {
  return STARTUP_LOW + ((seed >>> 0) % (STARTUP_HIGH - STARTUP_LOW));
}

/** Lays out the event of `seed` and returns its number of lines (1 to {@link MAX_EVENT_LINES}). */
export function layoutPython(seed: number): number {
  if (seed === laidOut) return lines;
  laidOut = seed;
  kind = kindOf(seed);
  reseed(seed);
  switch (kind) {
    case TRACEBACK:
      lines = layoutEpisode();
      break;
    case STARTUP:
      shards = int(2, 4);
      secondsPerShard = int(80, 250) / 100;
      weightsWarning = next() < 0.4;
      pid = int(7, 64);
      which = int(0, 2);
      lines = shards + 1 + (weightsWarning ? 2 : 0) + 4;
      break;
    case WARNINGS:
    case SOME_WEIGHTS:
      which = int(0, 2);
      lines = 2;
      break;
    default:
      lines = 1;
  }
  return lines;
}

/** Lines of the traceback episode at the start of the event last laid out; 0 when it is none. */
export function episodeLines(): number {
  return kind === TRACEBACK ? episode.lines : 0;
}

/** Nanoseconds between line `part - 1` and line `part` of the event last laid out; `u` uniform in [0, 1). */
export function lineStepNs(part: number, u: number): number {
  if (kind === STARTUP) {
    // A shard loads in about `secondsPerShard`; the rest follows within milliseconds.
    if (part <= shards) return Math.round((secondsPerShard * (0.9 + 0.2 * u)) * 1e9);
    return Math.round(200_000 + u * 30_000_000);
  }
  // The trailer: uvicorn logs the 500 once the exception has been written.
  if (kind === TRACEBACK && part === episode.lines) return Math.round(100_000 + u * 1_900_000);
  // One write() of a formatted record, split into lines by the log driver.
  return Math.round(3_000 + u * 57_000);
}

/** Renders line `part` of the event of `seed`, written at (ms, ns). */
export function renderPythonLine(seed: number, part: number, ms: number, ns: number): { log: string; stream: string } {
  layoutPython(seed);
  switch (kind) {
    case TRACEBACK:
      return { log: episodeLine(seed, part, ms), stream: part < episode.lines ? episodeStream() : 'stderr' };
    case STARTUP:
      return { log: startupLine(part), stream: 'stderr' };
    case WARNINGS:
      return { log: warningsLine(part, which), stream: 'stderr' };
    case SOME_WEIGHTS:
      return { log: someWeightsLine(part, which), stream: 'stderr' };
  }
  // A one-line event draws its details from its seed (its layout drew nothing).
  reseed(seed);
  switch (kind) {
    case VLLM:
      return { log: vllmLine(ms), stream: 'stdout' };
    case LOGGING:
      return { log: loggingDefaultLine(), stream: 'stderr' };
    case ASCTIME:
      return { log: asctimeLine(ms), stream: 'stderr' };
    case LOGURU:
      return { log: loguruLine(ms), stream: 'stderr' };
    case STRUCTLOG:
      return { log: structlogLine(ms, ns), stream: 'stdout' };
    case JSON_LOGGER:
      return { log: jsonLoggerLine(ms), stream: 'stderr' };
    case PRINT:
      return { log: printLine(), stream: 'stdout' };
    case TRANSFORMERS:
      return { log: transformersLine(), stream: 'stderr' };
    case ERROR_LINE: {
      const u = next();
      const log = u < 0.4 ? loggingDefaultLine(true) : u < 0.7 ? asctimeLine(ms, true) : loguruLine(ms, true);
      return { log, stream: 'stderr' };
    }
    default:
      return { log: accessLine(), stream: 'stderr' };
  }
}

function startupLine(part: number): string {
  if (part <= shards) return tqdmLine(part, shards, secondsPerShard);
  let p = part - shards - 1;
  if (weightsWarning) {
    if (p < 2) return someWeightsLine(p, which);
    p -= 2;
  }
  return uvicornStartLine(p, pid);
}
