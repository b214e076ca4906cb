//! Redaction of log text: the user's rules (regular expressions with replacements) and an
//! optional built-in preset for common secrets. Compiled once; a line that matches nothing is
//! returned as it is after a single scan.

/** One user redaction rule. */
export interface RedactionRule {
  /**
   * A JavaScript regular expression, applied to every match in the text (flag `g`, no other
   * flag; write `(?i:...)` for a case-insensitive part). Must not match the empty string.
   */
  pattern: string;
  /** What a match becomes; `$1`, `$<name>` and `$&` refer to the match. Default `[REDACTED]`. */
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

/** Rewrites a text; returns the very same string when nothing matched. */
export type Redactor = (text: string) => string;

/** The default replacement of a redacted match. */
export const REDACTED = '[REDACTED]';

// Each alternative has exactly one capture group, the text kept before the secret (empty when
// nothing is kept), so the replacer knows what to keep without knowing which alternative matched.
const SECRET_ALTERNATIVES: readonly string[] = [
  // Authorization header values with a scheme; the bare `Bearer` below catches the rest.
  String.raw`((?i:authorization)["']?\s*[:=]\s*["']?(?i:bearer|basic|token)\s+)[A-Za-z0-9\-._~+/]+=*`,
  // A bearer token has at least 8 characters and one that is not a letter, so that prose
  // ("the bearer of bad news", "Bearer authentication") is left alone.
  String.raw`(\b(?i:bearer)\s+)(?=[A-Za-z]*[0-9\-._~+/=])[A-Za-z0-9\-._~+/]{8,}=*`,
  String.raw`()(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}`,
  String.raw`()(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}`,
  String.raw`()(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])`,
  String.raw`((?i:aws_secret_access_key)["']?\s*[:=]\s*["']?)[A-Za-z0-9/+=]{16,}`,
];
const SECRETS_SOURCE = SECRET_ALTERNATIVES.map((a) => `(?:${a})`).join('|');

// A numbered or named back-reference would point elsewhere once patterns are joined into one.
const BACKREFERENCE = /\\(?:[1-9]|k<)/;

interface CompiledRule {
  regex: RegExp;
  replace: (text: string) => string;
}

/**
 * Compiles redaction rules into one function. Throws an `Error` naming the rule when a pattern
 * is not a valid regular expression or matches the empty string.
 */
export function compileRedactions(rules: readonly RedactionRule[], options: RedactionOptions = {}): Redactor {
  const compiled: CompiledRule[] = [];
  const sources: string[] = [];
  if (options.secretsPreset === true) {
    const regex = new RegExp(SECRETS_SOURCE, 'g');
    compiled.push({ regex, replace: (text) => text.replace(regex, keepPrefix) });
    sources.push(SECRETS_SOURCE);
  }
  rules.forEach((rule, i) => {
    const regex = compileRulePattern(rule.pattern, `redaction rule ${i + 1}`);
    const replacement = rule.replacement ?? REDACTED;
    compiled.push({ regex, replace: (text) => text.replace(regex, replacement) });
    sources.push(rule.pattern);
  });
  if (compiled.length === 0) return (text) => text;

  const precheck = combinedPrecheck(sources);
  const matchesAny = precheck
    ? (text: string) => precheck.test(text)
    : (text: string) => compiled.some((c) => testFromStart(c.regex, text));
  return (text) => {
    if (!matchesAny(text)) return text;
    let out = text;
    for (const c of compiled) out = c.replace(out);
    // Several rules can rewrite a match back to itself: keep the original string then.
    return out === text ? text : out;
  };
}

/** Compiles a user pattern with flag `g`, or throws an error naming it and saying why. */
export function compileRulePattern(pattern: string, what: string): RegExp {
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, 'g');
  } catch (err) {
    throw new Error(`${what}: invalid pattern ${JSON.stringify(pattern)}: ${(err as Error).message}`, { cause: err });
  }
  if (new RegExp(pattern).test('')) {
    throw new Error(`${what}: pattern ${JSON.stringify(pattern)} matches the empty string, so it would match every line`);
  }
  return regex;
}

function combinedPrecheck(sources: readonly string[]): RegExp | undefined {
  if (sources.length === 1) return new RegExp(sources[0] as string);
  if (sources.some((s) => BACKREFERENCE.test(s))) return undefined;
  try {
    return new RegExp(sources.map((s) => `(?:${s})`).join('|'));
  } catch {
    // Patterns valid alone can clash when joined (the same group name twice): test each then.
    return undefined;
  }
}

function testFromStart(regex: RegExp, text: string): boolean {
  regex.lastIndex = 0;
  const hit = regex.test(text);
  regex.lastIndex = 0;
  return hit;
}

function keepPrefix(_match: string, ...args: unknown[]): string {
  for (let i = 0; i < SECRET_ALTERNATIVES.length; i++) {
    const group = args[i];
    if (typeof group === 'string') return group + REDACTED;
  }
  return REDACTED;
}
