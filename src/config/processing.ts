//! The `processing` section (multiline, levels, JSON lines, redaction, filters) and the
//! keys a sink block takes to change it for itself (`raw`, `drop`, `min_level`). Patterns
//! (RE2 syntax, see processing/pattern.ts) are compiled here once, so one RE2 cannot run is
//! refused with its path and the reason before the daemon starts or reloads.
import { z } from 'zod';
import { compileNonEmptyPattern, compilePattern } from '../processing/pattern.js';
import { LEVELS } from '../processing/types.js';
import { Fail, show } from './units.js';
import { duration, leaf, scalar, size } from './fields.js';

const LEVEL_NAMES = LEVELS as readonly string[] as [string, ...string[]];

function regex(description: string, check: (source: string) => unknown = compilePattern) {
  return leaf<string>(description, { type: 'string', minLength: 1 }, (v) => {
    if (typeof v !== 'string' || v === '') return new Fail(`expected an RE2 pattern, got ${show(v)}`);
    try {
      check(v);
    } catch (err) {
      return new Fail(`${show(v)} cannot be used (patterns are RE2 syntax): ${(err as Error).message}`);
    }
    return v;
  });
}

/** A custom multiline block. */
const multilineRule = z
  .strictObject({
    start: regex('An RE2 pattern: a line matching it opens a block.'),
    continue: regex('An RE2 pattern: a line matching it carries the open block on (tried before `start`).'),
  })
  .describe('A custom block: a line matching `start` opens it, the following lines matching `continue` join it.');

const multilineSchema = z
  .strictObject({
    rule: z
      .union([z.literal('python'), multilineRule])
      .default('python')
      .describe(
        '`python` (default): a traceback (frames, code and caret lines, chained exceptions, up to the final `Type: message` line) is one record, headed by the error-level logging line just before it. Or a custom rule `{start, continue}`.',
      ),
    max_lines: scalar(z.number().int().min(1).default(500)).describe('Most lines in one record; the next line starts a new one.'),
    max_bytes: size('Most bytes of text in one record; the next line starts a new one.', { positive: true }).prefault('256KiB'),
    max_gap: duration(
      'A block closes when the next line of its stream, or the model\'s checkpoint, is more than this far after its last line in entry time. Never by the wall clock: the same journal gives the same records.',
    ).prefault('2s'),
  })
  .describe('Multiline grouping, per model and stream, in time order.');

const levelRule = z
  .strictObject({
    match: regex('An RE2 pattern searched in the line; the first rule that matches sets the level.'),
    level: z.enum(LEVEL_NAMES).describe('The level of the lines it matches.'),
    ignore_case: scalar(z.boolean().default(false)).describe('Match regardless of case.'),
  })
  .describe('A level rule, tried before the built-in formats.');

const redactRule = z
  .strictObject({
    pattern: regex('An RE2 pattern; every match is replaced. It must not match the empty string.', compileNonEmptyPattern),
    replacement: z.string().default('[REDACTED]').describe('What a match becomes; `$1`, `$<name>` and `$&` refer to the match, `$$` is a `$`.'),
  })
  .describe('A redaction rule.');

const dropRule = z
  .strictObject({
    match: regex('Records whose text matches this RE2 pattern are dropped. It must not match the empty string.', compileNonEmptyPattern),
  })
  .describe('A drop rule.');

/** The keys that choose which records a sink keeps; in `processing` for every sink, in a sink block for that sink. */
const filterKeys = {
  drop: z.array(dropRule).optional().describe('Drop records whose text matches any of these (e.g. `- match: "GET /health"`).'),
  min_level: z
    .enum(LEVEL_NAMES)
    .optional()
    .describe('Drop records less severe than this level; records with no level in their text are kept.'),
};

const processingObject = z
  .strictObject({
    multiline: z
      .union([z.literal(false), z.literal('off'), multilineSchema])
      .prefault({})
      .describe('Multiline grouping; `off` makes every line a record.'),
    levels: z
      .strictObject({
        rules: z.array(levelRule).default([]).describe('Your rules, tried in order before the built-in formats.'),
      })
      .prefault({})
      .describe(
        'Levels from the text: Python logging, asctime formats, uvicorn, loguru, vLLM, `[ERROR]`, JSON `level`/`levelname`/`severity`, Python numbers 10–50. Never from the stream.',
      ),
    redact: z
      .strictObject({
        secrets: scalar(z.boolean().default(false)).describe('Also scrub bearer tokens, Authorization values, `hf_…`, `sk-…` and AWS keys.'),
        rules: z.array(redactRule).default([]).describe('Your rules, applied in order after the secrets preset.'),
      })
      .prefault({})
      .describe('Redaction of the text, before any sink (raw sinks included).'),
    exceptions: z
      .strictObject({
        max_types_per_model: scalar(z.number().int().min(0).default(20)).describe(
          'Most exception types `mls_model_exceptions_total` has a series of per model (the first met since the start); the others are counted as `type="other"`.',
        ),
      })
      .prefault({})
      .describe('The exceptions read from Python tracebacks (`exception` in the records), and their metric.'),
    ...filterKeys,
  })
  .describe('Processing of the log lines before the sinks: multiline grouping, levels, JSON lines, redaction and filters.');

/** The `processing` section: an object, or `off` / `false`. */
export const processingSchema = z
  .union([z.literal(false), z.literal('off'), processingObject])
  .prefault({})
  .describe('Processing of the log lines (on by default); `off` ships every entry as one record, as the journal holds it.');

/** The keys every sink block takes about processing. */
export const sinkProcessingFields = {
  raw: scalar(z.boolean().default(false)).describe(
    'Ship one record per entry, exactly as the journal holds it: no grouping, levels, JSON or filter. Redaction still applies.',
  ),
  drop: filterKeys.drop.describe('Drop rules of this sink, instead of `processing.drop`.'),
  min_level: filterKeys.min_level.describe('Minimum level of this sink, instead of `processing.min_level`.'),
};

/** The parsed `processing` section. */
export type ProcessingConfig = z.output<typeof processingSchema>;
