//! Users' patterns (redaction rules, drop rules, level rules, custom multiline rules) on RE2,
//! through the pure-JavaScript port `re2js`: matching takes time linear in the text whatever
//! the pattern, so no rule and no line can stall delivery. The syntax is RE2's (Go's
//! `regexp`, the OpenTelemetry Collector's); what RE2 cannot run is refused when the config
//! is loaded, with a reason a person understands.
import { RE2JS, RE2JSSyntaxException } from 're2js';

/** A compiled user pattern: `test`, `exec` (groups as in JavaScript) and `matcher(text).replaceAll`. */
export type Pattern = RE2JS;

/** How a pattern is compiled. */
export interface PatternOptions {
  /** Match letters in any case. */
  ignoreCase?: boolean;
}

/** What RE2JS says, and what a person can do about it. */
const REASONS: ReadonlyArray<[RegExp, string]> = [
  [/invalid escape sequence: `\\[1-9k]`/, 'backreferences (\\1, \\k<name>) are not supported'],
  [/unsupported Perl syntax: `\(\?[=!]`|invalid named capture: `\(\?<[=!]/, 'lookahead and lookbehind are not supported'],
  [/unsupported Perl syntax: `\(\?>`/, 'atomic groups are not supported'],
  [/invalid nested repetition operator: `[^`]*\+`/, 'possessive quantifiers (a++, a*+, a?+) are not supported'],
  [/invalid nested repetition operator/, 'a repetition of a repetition (a**, a{2}{3}) is not allowed: put the inner one in a group'],
  [/invalid escape sequence: `\\u`/, '\\uXXXX is not supported: write \\x{XXXX}'],
  [/invalid repeat count/, 'repeat counts above 1000 are not supported'],
];

/**
 * Compiles `source` as an RE2 pattern. Throws an `Error` whose message is the reason it
 * cannot be used (`backreferences (\1, \k<name>) are not supported`, RE2's own words for
 * plain syntax errors).
 */
export function compilePattern(source: string, options: PatternOptions = {}): Pattern {
  try {
    return RE2JS.compile(source, options.ignoreCase === true ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    if (!(err instanceof RE2JSSyntaxException)) throw err;
    const said = err.message.replace(/^error parsing regexp: /, '');
    const reason = REASONS.find(([re]) => re.test(said))?.[1] ?? said;
    throw new Error(reason, { cause: err });
  }
}

/** {@link compilePattern}, refusing a pattern that matches the empty string (it would match every line). */
export function compileNonEmptyPattern(source: string): Pattern {
  const pattern = compilePattern(source);
  if (pattern.test('')) throw new Error('it matches the empty string, so it would match every line');
  return pattern;
}
