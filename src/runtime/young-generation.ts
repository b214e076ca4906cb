//! V8's young generation sized by the number of models.
//!
//! `mls` ships with a young generation of 1 MB per semi-space (`--max-semi-space-size=1`):
//! it keeps the resident set near the live heap, which is what a daemon with up to a few
//! thousand models needs. With many more models, the requests in flight outlive such a
//! small young generation (about 1,000 requests a second at 10,000 models fill it every
//! 15 ms), so most of what each request allocates is promoted and collected again by full
//! collections: at 10,000 models, 40 % of a core against 24 % with 4 MB semi-spaces (for
//! about 13 MB more resident memory), and 2–3 points less again with 8 MB (about 10 MB more).
//!
//! V8 sizes the young generation when the process starts, so `mls run` decides from the
//! configuration, before anything else runs, and starts itself again in the same process
//! (`process.execve`: same PID, same open standard streams, nothing to forward) with the
//! larger size. A config file of {@link LARGE_FROM_CONFIG_BYTES} or more (thousands of models
//! written in it) decides before it is read: reading 10,000 models with the small young
//! generation, only to start again and read them once more, took half of a restart (≈ 0.8 of
//! 1.7 s). An operator's own choice wins: a `--max-semi-space-size` other than the shipped
//! one, on node's command line or in `NODE_OPTIONS`, or `MLS_YOUNG_GENERATION=keep`.

/** The semi-space size the `mls` executable and the shipped service files pass (MB). */
export const SHIPPED_SEMI_SPACE_MB = 1;
/** The semi-space size for many models (MB). */
export const LARGE_SEMI_SPACE_MB = 8;
/** From this many models on, the larger young generation pays for its memory. */
export const LARGE_FROM_MODELS = 2_000;
/**
 * A config file this large holds thousands of models (about 3,000 in JSON, 7,000 in plain
 * YAML): the larger young generation is chosen before the file is read. Far above the
 * files of 1,000 models, which keep the small one and its start time.
 */
export const LARGE_FROM_CONFIG_BYTES = 128 * 1024;
/** The environment variable that keeps the young generation as it is (`keep`), or tells a restarted process why it runs (`raised`). */
export const YOUNG_GENERATION_ENV = 'MLS_YOUNG_GENERATION';

const FLAG = /^--max[-_]semi[-_]space[-_]size(?:=(.*))?$/;

/** What {@link planYoungGeneration} decides from. */
export interface YoungGenerationInput {
  /** Models in the configuration; undefined before it was read. */
  models: number | undefined;
  /** Size of the config file in bytes, if known. */
  configBytes?: number | undefined;
  /** Node's flags on its command line (`process.execArgv`). */
  execArgv: readonly string[];
  /** `process.env`. */
  env: Readonly<Record<string, string | undefined>>;
}

/** A restart with a larger young generation: node's new flags. */
export interface YoungGenerationPlan {
  semiSpaceMb: number;
  execArgv: string[];
}

/**
 * The semi-space size node was given: the last `--max-semi-space-size` of its command
 * line, else of `NODE_OPTIONS` (the command line wins), undefined when neither has one.
 */
export function givenSemiSpaceMb(execArgv: readonly string[], nodeOptions: string | undefined): number | undefined {
  const last = (words: readonly string[]): number | undefined => {
    let found: number | undefined;
    for (let i = 0; i < words.length; i++) {
      const m = FLAG.exec(words[i]!);
      if (!m) continue;
      found = Number(m[1] ?? words[i + 1]);
    }
    return found;
  };
  return last(execArgv) ?? last((nodeOptions ?? '').split(/\s+/).filter(Boolean));
}

/**
 * Whether to restart with a larger young generation, and node's flags for it: only when the
 * configuration has at least {@link LARGE_FROM_MODELS} models or its file at least
 * {@link LARGE_FROM_CONFIG_BYTES}, node runs with the shipped size, and neither the operator
 * nor an earlier restart said otherwise.
 */
export function planYoungGeneration(input: YoungGenerationInput): YoungGenerationPlan | undefined {
  if ((input.models ?? 0) < LARGE_FROM_MODELS && (input.configBytes ?? 0) < LARGE_FROM_CONFIG_BYTES) return undefined;
  if (input.env[YOUNG_GENERATION_ENV] !== undefined) return undefined;
  if (givenSemiSpaceMb(input.execArgv, input.env.NODE_OPTIONS) !== SHIPPED_SEMI_SPACE_MB) return undefined;
  const flag = `--max-semi-space-size=${LARGE_SEMI_SPACE_MB}`;
  const kept: string[] = [];
  for (let i = 0; i < input.execArgv.length; i++) {
    const m = FLAG.exec(input.execArgv[i]!);
    if (!m) kept.push(input.execArgv[i]!);
    else if (m[1] === undefined) i++; // the value was the next word
  }
  // On the command line: it wins over NODE_OPTIONS, which the new process reads again.
  return { semiSpaceMb: LARGE_SEMI_SPACE_MB, execArgv: [...kept, flag] };
}

/**
 * Starts this program again in the same process with `plan`'s flags; returns only if the
 * platform cannot (`process.execve` is missing before Node.js 22.15 and on Windows, or
 * the call failed), and the daemon then runs on with the young generation it has.
 */
export function restartWithYoungGeneration(plan: YoungGenerationPlan): { error: unknown } {
  const execve = (process as { execve?: (file: string, args: string[], env: Record<string, string | undefined>) => never }).execve;
  if (typeof execve !== 'function') return { error: new Error('process.execve is not available in this Node.js') };
  try {
    execve.call(process, process.execPath, [process.execPath, ...plan.execArgv, ...process.argv.slice(1)], { ...process.env, [YOUNG_GENERATION_ENV]: 'raised' });
  } catch (error) {
    return { error };
  }
  return { error: new Error('process.execve returned') };
}
