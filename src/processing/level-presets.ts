//! The built-in level patterns: anchored at the start of the line, chosen by its first
//! character, tried in order, first match wins. Only the structure a logger writes around a
//! level counts, never a level word met later in the text ("no errors found" has no level).

import type { DetectedLevel, Level } from './types.js';
import { LEVEL_WORDS, levelFromLetter, levelFromWord } from './level-words.js';

/** How a preset's captured text becomes a level. */
type Kind = 'word' | 'letter' | 'python-warning';

interface Preset {
  /** Sticky, so that it is anchored at `lastIndex` (after a process tag) without slicing the line. */
  readonly re: RegExp;
  readonly kind: Kind;
}

const preset = (source: string, kind: Kind = 'word', flags = ''): Preset => ({ re: new RegExp(source, `y${flags}`), kind });

const W = `(${LEVEL_WORDS.join('|')})`;
/** `2026-11-25 16:30:01,123`, `2026-11-25T16:30:01.123456Z`, `[…] +0000`, or a bare time. */
const STAMP = String.raw`(?:\d{4}[-/]\d\d[-/]\d\d[T ])?\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|\s?[+-]\d\d:?\d\d)?`;
const BRACKET = String.raw`\[[^\]\n]{1,64}\]`;

// A bare level word counts only in capitals, as Python's levelname writes it ("Error loading
// model" is prose); a word in brackets or after `level=` counts in any case.

/** Lines starting with a capital. */
const UPPER: readonly Preset[] = [
  // `WARNING:root:msg`, `INFO:     127.0.0.1:5000 - "GET …"` (uvicorn), `INFO 11-25 16:30:01 [x.py:1]` (vLLM),
  // `INFO  [alembic.runtime.migration] …`, `ERROR - msg`, `INFO     msg` (`%(levelname)-8s %(message)s`).
  preset(String.raw`${W}(?=[:\s])`),
  // glog / absl: `E1125 16:30:01.123456  1234 file.cc:42] msg`.
  preset(String.raw`([DIWEF])\d{4} \d\d:\d\d:\d\d`, 'letter'),
];

/** Lines starting with a digit: a timestamp, then the level. */
const DIGIT: readonly Preset[] = [
  preset(
    STAMP +
      '(?:' +
      // loguru: `2026-11-25 16:30:01.123 | WARNING  | module:func:42 - msg`
      String.raw`\s*\|\s*${W}\s*\|` +
      // `2026-11-25 16:30:01,123 - app - ERROR - msg`, `… - ERROR - app - msg`, `… - ERROR - msg`
      String.raw`|\s+-\s+(?:\S+\s+-\s+){0,2}${W}(?=\s+-\s|:)` +
      // `2026-11-25 16:30:01,123 ERROR app: msg`, tracing's `2026-11-25T16:30:01.123Z  INFO target: msg`,
      // `… [12345] ERROR …`
      String.raw`|\s+(?:${BRACKET}\s+)?${W}(?=[:\s])` +
      ')',
  ),
  // `2026-11-25 16:30:01,123 [ERROR] app: msg`, `2026-11-25 16:30:01 [main] [warning] msg`
  preset(String.raw`${STAMP}\s+(?:${BRACKET}\s+)?\[\s*${W}\s*\]`, 'word', 'i'),
];

/** Lines starting with `[`. */
const BRACKETED: readonly Preset[] = [
  // `[ERROR] msg`, `[2026-11-25 16:30:01] [warning] msg`, gunicorn's `[2026-11-25 16:30:01 +0000] [7] [INFO] msg`,
  // transformers' `[WARNING|modeling_utils.py:4170] 2026-11-25 … >> msg`
  preset(String.raw`(?:${BRACKET}\s*){0,3}\[\s*${W}\s*[\]|]`, 'word', 'i'),
  // Flask: `[2026-11-25 16:30:01,123] ERROR in app: msg`
  preset(String.raw`(?:${BRACKET}\s*){1,3}${W}(?=[:\s])`),
  // torch's C++ logs `[W1125 16:30:01.123456 4242 ProcessGroupNCCL.cpp:1234] …`, older `[W socket.cpp:663] …`,
  // tornado `[I 251125 16:30:01 web:2271] …`, jupyter `[I 2026-11-25 16:30:01.123 ServerApp] …`
  preset(
    String.raw`\[([DIWEFC])(?:\d{4} \d\d:\d\d:\d\d| \d{6} \d\d:\d\d:\d\d| \d{4}-\d\d-\d\d \d\d:\d\d:\d\d| [\w./-]+:\d+\])`,
    'letter',
  ),
];

/** Lines starting with a lowercase letter, `/` or `.`. */
const LOWER: readonly Preset[] = [
  // logfmt: `level=warn msg=…`, `time="2026-11-25T16:30:01Z" level=error msg=…`
  preset(String.raw`(?:(?:time|ts|t)=(?:"[^"\n]*"|\S+)\s+)?(?:level|lvl)="?${W}"?(?=\s|$)`, 'word', 'i'),
  // Python's `warnings`: `/opt/venv/lib/python3.11/site-packages/torch/cuda/__init__.py:61: FutureWarning: msg`
  preset(String.raw`[^\s:]+\.py:\d+: (\w*Warning): `, 'python-warning'),
];

/** `(VllmWorker rank=0 pid=123) `, `[rank0]:` and ANSI colours lead to the real start this many times at most. */
const MAX_DEPTH = 3;
const ESC = 27;
const ANSI_SGR = /\x1b\[[0-9;]*m/g;
/** Enough of a coloured line to hold any prefix the presets read. */
const ANSI_PREFIX = 512;

/** The level the built-in presets find at the start of `line`, or `undefined`. */
export function detectPresetLevel(line: string): DetectedLevel | undefined {
  return detectAt(line, 0, 0);
}

function detectAt(line: string, i: number, depth: number): DetectedLevel | undefined {
  const c = line.charCodeAt(i);
  if (c >= 65 && c <= 90) return tryPresets(UPPER, line, i);
  if (c >= 48 && c <= 57) return tryPresets(DIGIT, line, i);
  if (c === 91) {
    const found = tryPresets(BRACKETED, line, i);
    if (found !== undefined || depth >= MAX_DEPTH) return found;
    // torch.distributed's `[rank0]:` and torchrun's `[default0]:` before what the rank wrote.
    const end = tagEnd(line, i, 93, 40, true);
    return end > 0 && line.charCodeAt(end) === 58 ? detectAt(line, skipSpaces(line, end + 1), depth + 1) : undefined;
  }
  if (c === 40) {
    if (depth >= MAX_DEPTH) return undefined;
    // vLLM's and Ray's worker tags: `(VllmWorker rank=1 pid=4242) INFO 11-25 …`.
    const end = tagEnd(line, i, 41, 120, false);
    return end > 0 && isSpace(line.charCodeAt(end)) ? detectAt(line, skipSpaces(line, end), depth + 1) : undefined;
  }
  if ((c >= 97 && c <= 122) || c === 47 || c === 46) return tryPresets(LOWER, line, i);
  if (c === ESC && depth < MAX_DEPTH) return detectAt(line.slice(i, i + ANSI_PREFIX).replace(ANSI_SGR, ''), 0, depth + 1);
  return undefined;
}

function tryPresets(presets: readonly Preset[], line: string, start: number): DetectedLevel | undefined {
  for (let p = 0; p < presets.length; p++) {
    const { re, kind } = presets[p]!;
    re.lastIndex = start;
    const m = re.exec(line);
    if (m === null) continue;
    const text = firstGroup(m);
    const level: Level | undefined =
      kind === 'word' ? levelFromWord(text) : kind === 'letter' ? levelFromLetter(text) : 'warn';
    if (level !== undefined) return { level, text };
  }
  return undefined;
}

/** The text of the one capture group that took part in the match. */
function firstGroup(m: RegExpExecArray): string {
  for (let g = 1; g < m.length; g++) {
    const text = m[g];
    if (text !== undefined) return text;
  }
  return m[0];
}

/**
 * The index just after the tag opened at `i` and closed by `close` within `max` characters, or -1.
 * A `word` tag holds only letters, digits, `_` and `-`; any other tag, anything but brackets.
 */
function tagEnd(line: string, i: number, close: number, max: number, word: boolean): number {
  const limit = Math.min(line.length, i + max);
  for (let k = i + 1; k < limit; k++) {
    const c = line.charCodeAt(k);
    if (c === close) return k > i + 1 ? k + 1 : -1;
    if (word ? !isWordChar(c) : c === 40 || c === 91 || c === 10) return -1;
  }
  return -1;
}

function isWordChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9;
}

function skipSpaces(line: string, i: number): number {
  while (isSpace(line.charCodeAt(i))) i++;
  return i;
}
