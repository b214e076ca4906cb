//! Redaction of log text: the user's rules (RE2 patterns with replacements, see pattern.ts)
//! and an optional built-in preset for common secrets. Compiled once; a line that matches
//! nothing comes back as it was.
import { compileNonEmptyPattern, type Pattern } from './pattern.js';

/** One user redaction rule. */
export interface RedactionRule {
  /**
   * An RE2 pattern (see pattern.ts), applied to every match in the text; write `(?i:...)` for
   * a case-insensitive part. Must not match the empty string.
   */
  pattern: string;
  /** What a match becomes; `$1`, `$<name>` and `$&` refer to the match, `$$` is a `$`. Default `[REDACTED]`. */
  replacement?: string;
}

/** Options of {@link compileRedactions}. */
export interface RedactionOptions {
  /**
   * Also scrub common secrets (default `false`): bearer tokens and `Authorization` header
   * values, Hugging Face tokens (`hf_…`), OpenAI-style keys (`sk-…`, `sk-proj-…`), AWS access
   * key ids (`AKIA…`, `ASIA…`) and `aws_secret_access_key` values. Runs before the user's rules.
   */
  secretsPreset?: boolean;
}

/** Rewrites a text; returns it unchanged when nothing matched. */
export type Redactor = (text: string) => string;

/** The default replacement of a redacted match. */
export const REDACTED = '[REDACTED]';

// Each alternative has exactly one capture group, the text kept before the secret (empty when
// nothing is kept), so the replacer knows what to keep without knowing which alternative matched.
// A run of at least n is written `{n}` then `*`: V8 keeps a backtracking entry per character
// of a `{n,}` loop, and a 6 MB token overflowed its stack.
const SECRET_ALTERNATIVES: readonly string[] = [
  // Authorization header values with a scheme; the bare `Bearer` below catches the rest.
  String.raw`((?i:authorization)["']?\s*[:=]\s*["']?(?i:bearer|basic|token)\s+)[A-Za-z0-9\-._~+/]+=*`,
  // A bearer token has at least 8 characters and one that is not a letter, so that prose
  // ("the bearer of bad news", "Bearer authentication") is left alone.
  String.raw`(\b(?i:bearer)\s+)(?=[A-Za-z]*[0-9\-._~+/=])[A-Za-z0-9\-._~+/]{8}[A-Za-z0-9\-._~+/]*=*`,
  String.raw`()(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30}[A-Za-z0-9]*`,
  String.raw`()(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*`,
  String.raw`()(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])`,
  String.raw`((?i:aws_secret_access_key)["']?\s*[:=]\s*["']?)[A-Za-z0-9/+=]{16}[A-Za-z0-9/+=]*`,
];
// On V8's engine, not RE2: each alternative starts with a literal or a bounded run, so no
// text makes it backtrack more than linearly (test/processing/preset-linearity.test.ts).
const SECRETS = new RegExp(SECRET_ALTERNATIVES.map((a) => `(?:${a})`).join('|'), 'g');

/**
 * Compiles redaction rules into one function. Throws an `Error` naming the rule when a pattern
 * cannot be used (see pattern.ts) or matches the empty string.
 */
export function compileRedactions(rules: readonly RedactionRule[], options: RedactionOptions = {}): Redactor {
  const steps: Redactor[] = [];
  if (options.secretsPreset === true) steps.push((text) => text.replace(SECRETS, keepPrefix));
  rules.forEach((rule, i) => {
    const pattern = rulePattern(rule.pattern, `redaction rule ${i + 1}`);
    const replacement = rule.replacement ?? REDACTED;
    steps.push((text) => (pattern.test(text) ? pattern.matcher(text).replaceAll(replacement) : text));
  });
  if (steps.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const step of steps) out = step(out);
    return out;
  };
}

/** Compiles a rule's pattern that must not match the empty string, or throws an error naming it (`what`) and saying why. */
export function rulePattern(source: string, what: string): Pattern {
  try {
    return compileNonEmptyPattern(source);
  } catch (err) {
    throw new Error(`${what}: pattern ${JSON.stringify(source)} cannot be used: ${(err as Error).message}`, { cause: err });
  }
}

function keepPrefix(_match: string, ...args: unknown[]): string {
  for (let i = 0; i < SECRET_ALTERNATIVES.length; i++) {
    const group = args[i];
    if (typeof group === 'string') return group + REDACTED;
  }
  return REDACTED;
}
