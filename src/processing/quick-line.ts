//! The decision the stages take on most lines, read from the first bytes of the line as the
//! journal holds it (JSON-escaped UTF-8), without making a string of it: `INFO …`, `DEBUG …`,
//! `WARNING: …` and lines that start with punctuation are records alone with their level.

import { LEVEL_INDEX, LEVELS } from './types.js';
import { LEVEL_WORDS, levelFromWord } from './level-words.js';

const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;

interface Word {
  bytes: Uint8Array;
  level: number;
}

/** The level words by their first letter (index from `A`), in the order of the presets' alternation. */
const WORDS_BY_FIRST: ReadonlyArray<readonly Word[] | undefined> = Array.from({ length: 26 }, (_, i) => {
  const words = LEVEL_WORDS.filter((w) => w.charCodeAt(0) === 65 + i).map((w) => ({ bytes: Buffer.from(w), level: LEVEL_INDEX[levelFromWord(w)!] }));
  return words.length > 0 ? words : undefined;
});

/**
 * For the text of a line in its journal form, bytes [from, to) of `b` (JSON-escaped UTF-8):
 * when its first characters decide it, the level the built-in presets give (index in LEVELS;
 * LEVELS.length: none) of a line that is not a JSON object and opens no block of the python
 * rule with the default heading test; else -1, and the text must be read. Never -1 for the
 * usual `INFO …`, `DEBUG …`, `WARNING: …` lines, nor for print() output starting in lowercase.
 */
export function quickLevel(b: Uint8Array, from: number, to: number): number {
  // An empty line names no level, opens nothing and is no JSON object.
  if (from >= to) return LEVELS.length;
  const c = b[from]!;
  // A character beyond ASCII starts no preset: a line starting with one names no level, unless
  // it is white space (the lead bytes of U+00A0, U+1680, U+2000–U+205F, U+3000, U+FEFF), which
  // JSON objects and exception groups may start with.
  if (c >= 0xc3 && c !== 0xe1 && c !== 0xe2 && c !== 0xe3 && c !== 0xef) return LEVELS.length;
  // A printable ASCII character as itself: not an escape, not white space, not `{` (JSON).
  if (c < 0x21 || c > 0x7e || c === BACKSLASH || c === OPEN_BRACE) return -1;
  // What may open or head a Python block: `Traceback`, `+ Exception Group`, worker tags `(…)`
  // and `[…]`, time stamps, and ERROR, CRITICAL, FATAL, EXCEPTION.
  if (c === 84 || c === 43 || c === 40 || c === 91 || (c >= 48 && c <= 57) || c === 69 || c === 67 || c === 70) return -1;
  if (c >= 65 && c <= 90) {
    // The first preset for a capital, `${W}(?=[:\s])`; the others need the text.
    const words = WORDS_BY_FIRST[c - 65];
    if (words === undefined) return -1;
    for (let w = 0; w < words.length; w++) {
      const word: Word = words[w]!;
      const end = from + word.bytes.length;
      if (end < to && startsWith(b, from, word.bytes) && (b[end] === 0x3a || b[end] === 0x20)) return word.level;
    }
    return -1;
  }
  // Lowercase letters, `/` and `.` start the logfmt and `warnings` presets: read the text if
  // they may match.
  if ((c >= 97 && c <= 122) || c === 47 || c === 46) return mayBeLogfmtOrWarning(b, from, to) ? -1 : LEVELS.length;
  return LEVELS.length;
}

/** The words that may head a traceback (see `defaultHeadsBlock`), by first letter, with their levels. */
const HEADING_WORDS: ReadonlyArray<readonly Word[] | undefined> = Array.from({ length: 26 }, (_, i) => {
  const words = WORDS_BY_FIRST[i]?.filter((w) => ['ERROR', 'CRITICAL', 'FATAL', 'EXCEPTION'].includes(Buffer.from(w.bytes).toString()));
  return words !== undefined && words.length > 0 ? words : undefined;
});

/**
 * For the text of a line in its journal form, bytes [from, to) of `b`: when it starts with
 * `ERROR`, `CRITICAL`, `FATAL` or `EXCEPTION` and then `:` or a space (a logging line that may
 * head a traceback under the python rule with the default heading test, and no JSON object),
 * the level the built-in presets give it (index in LEVELS); else -1.
 */
export function quickHeading(b: Uint8Array, from: number, to: number): number {
  if (from >= to) return -1;
  const c = b[from]!;
  if (c !== 69 && c !== 67 && c !== 70) return -1;
  const words = HEADING_WORDS[c - 65];
  if (words === undefined) return -1;
  for (let w = 0; w < words.length; w++) {
    const word: Word = words[w]!;
    const end = from + word.bytes.length;
    if (end < to && startsWith(b, from, word.bytes) && (b[end] === 0x3a || b[end] === 0x20)) return word.level;
  }
  return -1;
}

/** `time=`, `ts=`, `t=`, `level=`, `lvl=` (any case) at the start, or a first word `….py` followed by `:`. */
function mayBeLogfmtOrWarning(b: Uint8Array, from: number, to: number): boolean {
  let i = from;
  while (i < to && isLetter(b[i]!)) i++;
  if (i < to && b[i] === 0x3d && LOGFMT_KEYS.has(String.fromCharCode(...b.subarray(from, i)).toLowerCase())) return true;
  // The first run of characters other than white space and `:`; unknown past an escape or a byte beyond ASCII.
  for (i = from; i < to; i++) {
    const c = b[i]!;
    if (c === BACKSLASH || c > 0x7e) return true;
    if (c === 0x20 || c === 0x3a) break;
  }
  return i < to && b[i] === 0x3a && i - from >= 4 && b[i - 3] === 0x2e && b[i - 2] === 0x70 && b[i - 1] === 0x79;
}

const LOGFMT_KEYS = new Set(['time', 'ts', 't', 'level', 'lvl']);

function isLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

function startsWith(b: Uint8Array, at: number, word: Uint8Array): boolean {
  for (let i = 0; i < word.length; i++) if (b[at + i] !== word[i]) return false;
  return true;
}
