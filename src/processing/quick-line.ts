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
 * usual `INFO …`, `DEBUG …`, `WARNING: …` lines, nor for print() output starting in lowercase
 * or with a capital that starts no level word.
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
  // What may open or head a Python block: `+ Exception Group`, worker tags `(…)` and `[…]`,
  // time stamps, and ERROR, CRITICAL, FATAL, EXCEPTION (`Traceback …` below).
  if (c === 43 || c === 40 || c === 91 || (c >= 48 && c <= 57) || c === 69 || c === 67 || c === 70) return -1;
  if (c >= 65 && c <= 90) {
    if (c === 84 && mayOpenTraceback(b, from, to)) return -1;
    // The first preset for a capital, `${W}(?=[:\s])`: a level word and `:` or a space. A level
    // word followed by anything else (a tab, an escape, a character beyond ASCII) needs the text.
    const word = levelWord(WORDS_BY_FIRST[c - 65], b, from, to);
    if (word !== NO_WORD) return word === OTHER_END ? -1 : word;
    // The other preset for a capital is glog's `D1125 16:30:01…` (and I, W; E and F are above).
    if ((c === 68 || c === 73 || c === 87) && from + 1 < to && b[from + 1]! >= 48 && b[from + 1]! <= 57) return -1;
    // Prose (`Starting server`, `Model loaded in 2.1 s`): no level, no block, no JSON.
    return LEVELS.length;
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
  const word = levelWord(HEADING_WORDS[c - 65], b, from, to);
  return word >= 0 ? word : -1;
}

/** {@link levelWord}: no word of the list starts the text. */
const NO_WORD = -1;
/** {@link levelWord}: a word starts the text, followed by neither `:` nor a space (or by nothing). */
const OTHER_END = -2;

/**
 * The level of the first of `words` (in their order) that starts bytes [from, to) followed by
 * `:` or a space, as the presets' `${W}(?=[:\s])` reads a level word; else {@link OTHER_END}
 * when one starts them followed by anything else, or {@link NO_WORD}.
 */
function levelWord(words: readonly Word[] | undefined, b: Uint8Array, from: number, to: number): number {
  if (words === undefined) return NO_WORD;
  let found = NO_WORD;
  for (let w = 0; w < words.length; w++) {
    const word: Word = words[w]!;
    const end = from + word.bytes.length;
    if (end > to || !startsWith(b, from, word.bytes)) continue;
    if (end < to && (b[end] === 0x3a || b[end] === 0x20)) return word.level;
    found = OTHER_END;
  }
  return found;
}

const TRACEBACK = Buffer.from('Traceback (most recent call last):');

/**
 * Whether the line may be a traceback's first line, `Traceback (most recent call last):` with
 * nothing after it but white space: false once a character that is not white space follows
 * (an entry holding a whole traceback, `Traceback (most recent call last):\n  File …`, opens
 * no block and names no level). Escapes and bytes beyond ASCII it cannot rule out count as
 * white space.
 */
function mayOpenTraceback(b: Uint8Array, from: number, to: number): boolean {
  if (from + TRACEBACK.length > to || !startsWith(b, from, TRACEBACK)) return false;
  for (let i = from + TRACEBACK.length; i < to; i++) {
    const c = b[i]!;
    if (c === 0x20 || c > 0x7e) continue;
    if (c !== BACKSLASH) return false;
    const e = b[i + 1];
    // `\n`, `\r`, `\t`, `\f` are white space; `\uXXXX` may be; `\"`, `\\`, `\/`, `\b` are not.
    if (e === 0x6e || e === 0x72 || e === 0x74 || e === 0x66) i++;
    else if (e === 0x75) i += 5;
    else return false;
  }
  return true;
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
