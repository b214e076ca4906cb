//! Severity from a line: the user's rules first, then the built-in patterns anchored at the
//! start of the line (Python logging, uvicorn, loguru, vLLM, gunicorn, Flask, glog/torch…),
//! and the level fields of a parsed JSON object. A line that names no level gets none: Python
//! writes every level to stderr, so the stream says nothing, and a guess would be worse.

import { LEVELS, type DetectedLevel, type Level } from './types.js';
import { detectPresetLevel } from './level-presets.js';
import { levelFromPythonNumber, levelFromWord } from './level-words.js';
import { compilePattern, type Pattern } from './pattern.js';

export { levelFromWord, levelFromPythonNumber, severityNumber } from './level-words.js';

/** A user's level rule, as the configuration writes it. */
export interface LevelRule {
  /**
   * An RE2 pattern (see pattern.ts) tried on the whole line, before the built-in patterns;
   * anchor it with `^` to look only at the start. The level's text is the group named `level`,
   * else the first group that matched, else the level in capitals (`ERROR`).
   */
  match: string;
  /** The level of a line the pattern matches. */
  level: Level;
  /** Match letters in any case. Default `false`. */
  ignoreCase?: boolean;
}

/** A rule ready for {@link detectLevel}. */
export interface CompiledLevelRule {
  readonly pattern: Pattern;
  readonly level: Level;
}

/** Rules compiled by {@link compileLevelRules}, tried in order. */
export type CompiledLevelRules = readonly CompiledLevelRule[];

const NO_RULES: CompiledLevelRules = Object.freeze([]);

/**
 * Compiles the user's rules once, for every line. Throws an `Error` naming the rule (index and
 * pattern) when a pattern is empty or cannot be used (see pattern.ts), or a level is unknown.
 */
export function compileLevelRules(rules: readonly LevelRule[]): CompiledLevelRules {
  return Object.freeze(rules.map(compileRule));
}

function compileRule(rule: LevelRule, index: number): CompiledLevelRule {
  const name = `level rule ${index} (${JSON.stringify(rule.match)})`;
  if (typeof rule.match !== 'string' || rule.match === '') {
    throw new Error(`${name}: match must be a non-empty regular expression`);
  }
  if (!LEVELS.includes(rule.level)) {
    throw new Error(`${name}: level must be one of ${LEVELS.join(', ')}, got ${JSON.stringify(rule.level)}`);
  }
  let pattern: Pattern;
  try {
    pattern = compilePattern(rule.match, { ignoreCase: rule.ignoreCase === true });
  } catch (err) {
    throw new Error(`${name}: ${(err as Error).message}`, { cause: err });
  }
  return Object.freeze({ pattern, level: rule.level });
}

/**
 * The level of a line: the first user rule that matches, else the first built-in pattern that
 * matches the start of the line, else `undefined` (print() output, progress bars, prose). A
 * level word later in the line never counts: "ERROR: failed to load model info" is an error,
 * "loaded model info" and "no errors found" have no level.
 */
export function detectLevel(line: string, rules: CompiledLevelRules = NO_RULES): DetectedLevel | undefined {
  for (let r = 0; r < rules.length; r++) {
    const rule = rules[r]!;
    // The test runs on RE2's automaton without capture groups: most lines end there.
    if (!rule.pattern.test(line)) continue;
    const m = rule.pattern.exec(line) as RegExpExecArray | null;
    if (m !== null) return { level: rule.level, text: ruleText(m, rule.level) };
  }
  return detectPresetLevel(line);
}

function ruleText(m: RegExpExecArray, level: Level): string {
  const named = m.groups?.level;
  if (named !== undefined && named !== '') return named;
  for (let g = 1; g < m.length; g++) {
    const text = m[g];
    if (text !== undefined && text !== '') return text;
  }
  return level.toUpperCase();
}

/** Fields read by {@link levelFromJsonObject}, in order. */
const JSON_FIELDS = ['level', 'levelname', 'severity', 'lvl', 'log.level'] as const;
/** Cloud Logging's `severity` words above CRITICAL. */
const JSON_EXTRA_WORDS: ReadonlyMap<string, Level> = new Map<string, Level>([
  ['ALERT', 'fatal'],
  ['EMERGENCY', 'fatal'],
]);

/**
 * The level of a parsed JSON log line, from the first of `level`, `levelname`, `severity`,
 * `lvl`, `log.level` (flat, as ECS writes it, or nested) that names one: a word in any case or
 * one of Python's numbers (10 debug … 50 fatal; never OTLP severity numbers), as a number or a
 * string of digits. loguru's `serialize=True` form (`record.level.name`) is read too.
 * `undefined` when no field names a level.
 */
export function levelFromJsonObject(obj: unknown): DetectedLevel | undefined {
  if (!isRecord(obj)) return undefined;
  for (const field of JSON_FIELDS) {
    const found = levelFromValue(obj[field]);
    if (found !== undefined) return found;
  }
  if (isRecord(obj.log)) {
    const found = levelFromValue(obj.log.level);
    if (found !== undefined) return found;
  }
  return isRecord(obj.record) ? levelFromValue(obj.record.level) : undefined;
}

function levelFromValue(value: unknown): DetectedLevel | undefined {
  if (typeof value === 'number') return withText(levelFromPythonNumber(value), String(value));
  if (typeof value === 'string') {
    const text = value.trim();
    if (/^\d{1,3}$/.test(text)) return withText(levelFromPythonNumber(Number(text)), text);
    return withText(levelFromWord(text) ?? JSON_EXTRA_WORDS.get(text.toUpperCase()), text);
  }
  // loguru: `"level": {"name": "INFO", "no": 20, "icon": "ℹ️"}`; only one level deep.
  if (!isRecord(value)) return undefined;
  const { name, no } = value;
  return (typeof name === 'string' ? levelFromValue(name) : undefined) ?? (typeof no === 'number' ? levelFromValue(no) : undefined);
}

function withText(level: Level | undefined, text: string): DetectedLevel | undefined {
  return level === undefined ? undefined : { level, text };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
