//! Record filters: drop records whose text matches a pattern, or whose level is below a
//! minimum. Compiled once, pure.

import { LEVELS, type Level } from './types.js';
import { rulePattern } from './redact.js';

/** A drop rule: records whose text matches are dropped. */
export interface DropRule {
  /** An RE2 pattern (see pattern.ts), unanchored and case-sensitive; searched in the record's text. */
  match: string;
}

/** Options of {@link compileFilter}. */
export interface FilterOptions {
  /** Drop records matching any of these. */
  drop?: readonly DropRule[];
  /** Drop records less severe than this; records with no detected level are kept. */
  minLevel?: Level;
}

/** What a filter decided; `level` is reported when both reasons apply. */
export type FilterDecision = 'keep' | { drop: 'match' | 'level' };

/** The record as a filter sees it. */
export interface FilterInput {
  log: string;
  level: Level | undefined;
}

/** Decides whether a record is kept. */
export type RecordFilter = (record: FilterInput) => FilterDecision;

const DROP_MATCH: FilterDecision = Object.freeze({ drop: 'match' as const });
const DROP_LEVEL: FilterDecision = Object.freeze({ drop: 'level' as const });

/**
 * Compiles a filter. Throws an `Error` naming the option when `minLevel` is not a level, or
 * when a drop pattern is invalid or matches the empty string (it would drop every record).
 */
export function compileFilter(options: FilterOptions = {}): RecordFilter {
  const { drop = [], minLevel } = options;
  let minRank = -1;
  if (minLevel !== undefined) {
    minRank = LEVELS.indexOf(minLevel);
    if (minRank < 0) {
      throw new Error(`minLevel: expected one of ${LEVELS.join(', ')}, got ${JSON.stringify(minLevel)}`);
    }
  }
  const patterns = drop.map((rule, i) => rulePattern(rule.match, `drop[${i}].match`));
  return (record: FilterInput): FilterDecision => {
    if (minRank > 0 && record.level !== undefined && LEVELS.indexOf(record.level) < minRank) return DROP_LEVEL;
    for (const p of patterns) if (p.test(record.log)) return DROP_MATCH;
    return 'keep';
  };
}
