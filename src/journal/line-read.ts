//! Reading journal lines, `{"model_id":…,"time":"…","stream":"…","log":"…"}\n`, without
//! JSON.parse: each string is cut out of the text, and only one holding an escape goes
//! through JSON.parse; a line of any other shape is parsed whole. About twice as fast as
//! JSON.parse of the page: the cost of every sink that reads the entries' text (processing,
//! webhooks, OTLP).

const NEWLINE = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const CLOSE_BRACE = 0x7d;

/** Where the last {@link jsonString} ended (after its closing quote): no object per string on the hot path. */
let stringEnd = 0;
const STREAM_KEY = ',"stream":';
const LOG_KEY = ',"log":';
const STDOUT = '"stdout"';
const STDERR = '"stderr"';

/** The fields of a journal line. */
export interface LineFields {
  time: string;
  stream: string;
  log: string;
}

/** Characters of a journal line of `modelId` up to its time: `{"model_id":"…","time":`. */
export function journalHead(modelId: string): number {
  return ('{"model_id":' + JSON.stringify(modelId) + ',"time":').length;
}

/**
 * Reads the journal line of `text` starting at `pos` (`head` characters up to its time) into
 * `e`; returns where the next line starts.
 */
export function readLine(text: string, pos: number, head: number, e: LineFields): number {
  const next = readLineAt(text, pos, head, e);
  if (next >= 0) return next;
  let end = text.indexOf('\n', pos);
  if (end < 0) end = text.length;
  parseLine(text.slice(pos, end), e);
  return end + 1;
}

/**
 * Reads the journal line of `text` starting at `pos` into `e`, and returns where the next
 * line starts (after its newline, or past the end of `text` for a last line without one);
 * -1, reading nothing, when the line is not of the usual shape.
 */
function readLineAt(text: string, pos: number, head: number, e: LineFields): number {
  const timeString = jsonString(text, pos + head);
  if (timeString === undefined) return -1;
  let at = stringEnd;
  if (!text.startsWith(STREAM_KEY, at)) return -1;
  at += STREAM_KEY.length;
  // The usual streams are not cut out of the text each time.
  let stream: string | undefined;
  if (text.startsWith(STDOUT, at)) stream = 'stdout';
  else if (text.startsWith(STDERR, at)) stream = 'stderr';
  if (stream !== undefined) at += STDOUT.length;
  else {
    stream = jsonString(text, at);
    if (stream === undefined) return -1;
    at = stringEnd;
  }
  if (!text.startsWith(LOG_KEY, at)) return -1;
  const log = jsonString(text, at + LOG_KEY.length);
  // the line ends right after the log: `}`, then its newline or the end of the text
  if (log === undefined || text.charCodeAt(stringEnd) !== CLOSE_BRACE) return -1;
  const next = stringEnd + 1;
  if (next !== text.length && text.charCodeAt(next) !== NEWLINE) return -1;
  e.time = timeString;
  e.stream = stream;
  e.log = log;
  return next + 1;
}

/** Reads a line of an unusual shape with JSON.parse. */
export function parseLine(line: string, e: LineFields): void {
  const r = JSON.parse(line) as LineFields;
  e.time = r.time;
  e.stream = r.stream;
  e.log = r.log;
}

/** The JSON string starting at `at` (its opening quote); sets {@link stringEnd}. */
function jsonString(line: string, at: number): string | undefined {
  if (line.charCodeAt(at) !== QUOTE) return undefined;
  let close = line.indexOf('"', at + 1);
  if (close < 0) return undefined;
  const escape = nextBackslash(line, at + 1);
  if (escape < 0 || escape > close) {
    stringEnd = close + 1;
    return line.slice(at + 1, close);
  }
  // An escape: find the quote that ends the string (one not escaped), then let JSON.parse read it.
  for (;;) {
    let backslashes = 0;
    for (let k = close - 1; line.charCodeAt(k) === BACKSLASH; k--) backslashes++;
    if (backslashes % 2 === 0) break;
    close = line.indexOf('"', close + 1);
    if (close < 0) return undefined;
  }
  stringEnd = close + 1;
  return unescapeQuotes(line, at + 1, close) ?? (JSON.parse(line.slice(at, close + 1)) as string);
}

/** The last backslash search: read line after line in a page's text, most strings hold none. */
let searched = '';
let searchedFrom = 0;
let found = -1;

/** `text.indexOf('\\', from)`, remembered: a page's text is searched once, not once per line. */
function nextBackslash(text: string, from: number): number {
  if (text === searched && from >= searchedFrom && (found < 0 || found >= from)) return found;
  searched = text;
  searchedFrom = from;
  found = text.indexOf('\\', from);
  return found;
}

/** The string between `from` and `to` when its only escapes are `\"` and `\\` (quoted text, paths), else undefined. */
function unescapeQuotes(line: string, from: number, to: number): string | undefined {
  let out = '';
  let start = from;
  for (let k = nextBackslash(line, from); k >= 0 && k < to; k = nextBackslash(line, k + 2)) {
    const next = line.charCodeAt(k + 1);
    if (next !== QUOTE && next !== BACKSLASH) return undefined;
    out += line.slice(start, k);
    start = k + 1;
  }
  return out + line.slice(start, to);
}
