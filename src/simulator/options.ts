//! The simulator's options, and their validation: a wrong option is refused at start with
//! its name and the accepted values.
import { randomInt } from 'node:crypto';
import { z } from 'zod';
import { FAULT_KINDS, type FaultRates } from './faults.js';

/**
 * What the simulated models write: `plain`, short service lines, a traceback sometimes within
 * one entry (the rates below); `python`, the output of a Python model server one line per
 * entry (uvicorn, logging, loguru, vLLM, JSON loggers, tracebacks as consecutive entries).
 */
export type { ContentProfile } from './content-python.js';
import type { ContentProfile } from './content-python.js';

const END_STYLES = ['absent', 'null', 'empty', 'rotate'] as const;
/** How the last page of a window fetch says that no more logs remain. */
export type EndStyle = (typeof END_STYLES)[number];

const nonNegative = z.number({ error: 'must be a finite number ≥ 0' }).min(0);
const probability = z.number({ error: 'must be a probability in [0, 1]' }).min(0).max(1);
const span = z
  .object({ min: nonNegative, max: nonNegative }, { error: 'must be {min, max}' })
  .refine((r) => r.min <= r.max, 'min must not exceed max')
  .transform((r) => ({ min: Math.round(r.min), max: Math.round(r.max) }));
const PAGE_SIZE_RULE = 'must be an integer ≥ 1 or a range {min, max} of such integers with min ≤ max';
const pageCount = z.int({ error: PAGE_SIZE_RULE }).min(1);

/** Fault probabilities and behaviour, each optional (also when they change at run time). */
const faultsSchema: z.ZodType<Partial<FaultRates>, Partial<FaultRates>> = z.object({
  ...Object.fromEntries(FAULT_KINDS.map((k) => [k, probability.optional()])),
  slowMs: nonNegative.optional(),
  retryAfter: nonNegative.optional(),
  retryAfterStyle: z.enum(['seconds', 'date', 'mixed'], { error: "must be 'seconds', 'date' or 'mixed'" }).optional(),
});

const optionsSchema = z
  .object({
    /** Interface to listen on. Default `127.0.0.1`. */
    host: z.string().default('127.0.0.1'),
    /** Port; 0 picks a free one. Default 0. */
    port: z.int().min(0).max(65_535).default(0),
    /** The workspace token; `Authorization` must equal it exactly. */
    token: z.string({ error: 'must be a non-empty string' }).min(1),
    /** Also accept `Authorization: Bearer <token>`. Default false, as the real service. */
    acceptBearer: z.boolean().default(false),
    /** Ids of the models the service knows. */
    models: z
      .array(z.string({ error: 'must be a non-empty string' }).min(1), { error: 'must be an array of non-empty strings' })
      .refine((ids) => new Set(ids).size === ids.length, 'must not repeat an id'),
    /** How a request for another model is answered: 404 `Model not found` (default) or 400 with details naming the id. */
    unknownModelStatus: z.literal([400, 404]).default(404),
    /** New entries per second per model; may be fractional or 0. */
    ratePerSec: nonNegative,
    /** Models with a rate of their own instead of `ratePerSec` (e.g. 0 for a quiet model). */
    ratePerModel: z.record(z.string(), nonNegative).optional(),
    /**
     * Span of entries already present at start, in ms. Default 0. Every entry is held in
     * memory, so keep `historyMs / 1000 × ratePerSec × models` below about 5 million.
     */
    historyMs: nonNegative.default(0),
    /** Each entry becomes visible after a random delay in [min, max] ms (late arrivals). Default none. */
    ingestDelayMs: span.default({ min: 0, max: 0 }),
    /**
     * A share of the entries (0–1) that become visible after a delay drawn from `delayMs`
     * instead of `ingestDelayMs`: a tail of late arrivals beside the usual delay. Default none.
     */
    lateArrivals: z.object({ share: probability, delayMs: span }).optional(),
    /** Entries per page, fixed or drawn per page from a range. Default 500. */
    pageSize: z
      .union([pageCount.transform((n) => ({ min: n, max: n })), z.object({ min: pageCount, max: pageCount }).refine((r) => r.min <= r.max, PAGE_SIZE_RULE)], { error: PAGE_SIZE_RULE })
      .default({ min: 500, max: 500 }),
    /** Order of the entries within a page. Default `sorted`. */
    order: z.enum(['sorted', 'shuffled'], { error: "must be 'sorted' or 'shuffled'" }).default('sorted'),
    /** How the last page signals the end; `rotate` cycles through the other three. Default `absent`. */
    endStyle: z.enum(END_STYLES, { error: "must be 'absent', 'null', 'empty' or 'rotate'" }).default('absent'),
    /** Tokens older than this are rejected with 400 `next_token expired`. Default 5 minutes. */
    tokenTtlMs: nonNegative.default(5 * 60_000),
    /** Fault probabilities per request; every kind defaults to 0. */
    faults: faultsSchema.optional(),
    /** Probability that an entry has a genuine identical twin (same time, stream and line). Default 0. */
    twinRate: probability.default(0),
    /** What the models write. Default `plain`; the four rates below apply to `plain` only. */
    content: z.enum(['plain', 'python'] satisfies ContentProfile[], { error: "must be 'plain' or 'python'" }).default('plain'),
    /** Probability of a multi-line entry (a traceback). Default 0.02. */
    multilineRate: probability.default(0.02),
    /** Probability of an entry with non-ASCII text. Default 0.02. */
    unicodeRate: probability.default(0.02),
    /** Probability of an empty line. Default 0.005. */
    emptyRate: probability.default(0.005),
    /** Probability of a line of about 9 KB. Default 0.002. */
    longRate: probability.default(0.002),
    /** Share of entries whose time has fewer than nine fractional digits. Default 0.1. */
    shortDigitsRate: probability.default(0.1),
    /**
     * Share of entries served off the spec (`log` null or a number, `stream` a number, a time
     * that is no ISO 8601 time, an array instead of an object), each the same way at every
     * read; never a line of a traceback episode. Default 0.
     */
    offSpecRate: probability.default(0),
    /**
     * Probability that an entry (of a one-line event) is a hostile line instead: a JSON object
     * nested 10,000 deep, a 6 MB token-like run, a line catastrophic for backtracking patterns,
     * a lone surrogate, a JSON line a sink cannot encode as it is. Default 0.
     */
    hostileRate: probability.default(0),
    /** Seed of every random choice (content, delays, page sizes, faults). Default random. */
    seed: z.number().default(() => randomInt(0, 2 ** 32 - 1)),
    /** Epoch milliseconds; entry times and visibility follow it. Default `Date.now`. */
    clock: z.custom<() => number>((v) => typeof v === 'function', 'must be a function').default(() => Date.now),
  })
  .refine((o) => Object.keys(o.ratePerModel ?? {}).every((id) => o.models.includes(id)), { message: 'must name only ids of models', path: ['ratePerModel'] });

/** Options of {@link startSimulator}. */
export type SimulatorOptions = z.input<typeof optionsSchema>;
/** The options checked, with their defaults. */
export type ResolvedOptions = z.output<typeof optionsSchema>;

/** `value` parsed with `schema`, or a RangeError naming each option that is wrong and what it takes. */
function parse<T extends z.ZodType>(schema: T, value: unknown, prefix = ''): z.output<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new RangeError(parsed.error.issues.map((i) => `${prefix}${i.path.join('.')} ${i.message}`).join('; '));
  return parsed.data;
}

/** Checks every option, naming the one that is wrong; returns them with their defaults. */
export function resolveOptions(o: SimulatorOptions): ResolvedOptions {
  return parse(optionsSchema, o);
}

/** Checks fault probabilities and behaviour (also when they change at run time). */
export function validateFaults(f: Partial<FaultRates>): void {
  parse(faultsSchema, f, 'faults.');
}
