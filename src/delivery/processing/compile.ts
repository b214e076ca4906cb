//! The processing of one sink, compiled from the `processing` section and the sink's own
//! keys (`raw`, `drop`, `min_level`).
import type { ProcessingConfig } from '../../config/processing.js';
import type { SinkBlock } from '../../config/sink-block.js';
import { compileFilter } from '../../processing/filter.js';
import { compileLevelRules } from '../../processing/levels.js';
import { compileRedactions, type Redactor } from '../../processing/redact.js';
import { compilePattern } from '../../processing/pattern.js';
import type { Level } from '../../processing/types.js';
import type { StageOptions } from './stage.js';

/** What a sink's stage is built from; undefined when the sink gets the journal's entries as they are. */
export type SinkProcessing = Pick<StageOptions, 'processor' | 'raw' | 'fast'>;

/**
 * The processing of `sink`: undefined with `processing: off`, and for a `raw` sink when
 * nothing is redacted (its batches are then the journal's lines, untouched).
 */
export function sinkProcessing(processing: ProcessingConfig, sink: Pick<SinkBlock, 'raw' | 'drop' | 'min_level'>): SinkProcessing | undefined {
  if (processing === false || processing === 'off') return undefined;
  const redact = redactor(processing);
  if (sink.raw) return redact ? { raw: true, processor: { redact, multiline: false } } : undefined;
  const multiline = processing.multiline;
  const drop = sink.drop ?? processing.drop;
  const minLevel = (sink.min_level ?? processing.min_level) as Level | undefined;
  return {
    raw: false,
    fast: !redact && processing.levels.rules.length === 0 && (drop ?? []).length === 0 && (multiline === false || multiline === 'off' || multiline.rule === 'python'),
    processor: {
      multiline:
        multiline === false || multiline === 'off'
          ? false
          : {
              rule: multiline.rule === 'python' ? 'python' : { start: compilePattern(multiline.rule.start), continue: compilePattern(multiline.rule.continue) },
              maxLines: multiline.max_lines,
              maxBytes: multiline.max_bytes,
              maxGapMs: multiline.max_gap,
            },
      levelRules: compileLevelRules(processing.levels.rules.map((r) => ({ match: r.match, level: r.level as Level, ignoreCase: r.ignore_case }))),
      ...(redact ? { redact } : {}),
      ...(drop !== undefined || minLevel !== undefined ? { filter: compileFilter({ drop: drop ?? [], ...(minLevel ? { minLevel } : {}) }) } : {}),
    },
  };
}

function redactor(processing: Exclude<ProcessingConfig, false | 'off'>): Redactor | undefined {
  const { secrets, rules } = processing.redact;
  if (!secrets && rules.length === 0) return undefined;
  return compileRedactions(rules, { secretsPreset: secrets });
}
