//! Loads the configuration: reads the YAML file, interpolates `${VAR}`, joins the models of
//! `models_file` to the inline ones, validates against the schema, checks what spans several
//! fields, resolves relative paths and the API token, then freezes the result. Every problem is collected before one ConfigError.
//! The schema and the checks of the sink types come from whoever builds the loader.
//! Without the environment (`noEnv`), unset variables and a token from outside the file
//! stand in for any value (placeholders.ts) and every other check still runs.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { SecretScrubber, registerSecret } from '../telemetry/secrets.js';
import { crossCheck } from './cross-check.js';
import { interpolate, isObj, isUnder } from './interpolate.js';
import { markedFields, secretStrings } from './marks.js';
import { fillPlaceholders, type SchemaIssue } from './placeholders.js';
import { joinModelsFile } from './models-file.js';
import { applyModelDefaults } from './model-defaults.js';
import { configErrorMap, formatProblem, issuesToProblems, type RawProblem } from './problems.js';
import type { Config, ConfigSchema } from './schema.js';
import { checkModelSettings } from './settings-fields.js';
import { resolveToken } from './token.js';
import { show } from './units.js';
import { readYaml, YamlSyntaxError } from './yaml.js';

/** Options of {@link ConfigLoader.parse}. */
export interface ParseConfigOptions {
  /** Directory relative paths are resolved against (the config file's directory). Default: the working directory. */
  baseDir?: string;
  /** Environment for `${VAR}` interpolation and the token fallbacks. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Name used for the source in the error message (e.g. the file path). */
  source?: string;
  /**
   * Check the file without the environment (`mls validate --no-env`): `env` is not read, an
   * unset `${VAR}` stands for any value its field accepts, and a token that would come from
   * outside the file (the environment, a credential, a `token_file` that does not exist here)
   * is a stand-in. Every other check runs.
   */
  noEnv?: boolean;
  /** With `noEnv`: told what stood in for the environment. */
  onStandIns?(standIns: StandIns): void;
}

/** What stood in for the environment in a check without it. */
export interface StandIns {
  /** The variables that were unset, each once, in the order met. */
  variables: string[];
  /** Whether the token was not read (it comes from outside the file). */
  token: boolean;
}

/** The token of a config checked without the environment, when it would come from outside the file. */
export const STAND_IN_TOKEN = 'stand-in-token';

/** The schema, and the checks that the sink types contribute. */
export interface ConfigParts {
  /** The schema of the file, made by `buildConfigSchema`. */
  schema: ConfigSchema;
  /**
   * Checks of one sink block as written that span several of its fields (paths below the
   * block). They run even when other fields are broken.
   */
  checkSink?(block: Record<string, unknown>): RawProblem[];
  /** Checks of the parsed sinks and models, paths resolved (paths from the top of the file). */
  validate?(config: Pick<Config, 'sinks' | 'models'>): RawProblem[];
}

const SECRET_VAR_RE = /TOKEN|SECRET|PASS|KEY|AUTH|CRED|SIGN/i;

/** A module sink's option key that names a secret (`token`, `api_key`, `password`, `client_secret`, `authorization`, …). */
const SECRET_KEY_RE = /(?:^|[_-])(?:token|secret|password|passwd|api[_-]?key|auth|authorization|credentials?)$/i;
/** Shorter values are left alone: scrubbing a short word everywhere would garble the output. */
const MIN_UNMARKED_SECRET = 8;

/**
 * Secrets the schema cannot mark: a module sink's options are free-form, so its string
 * options under keys that name a secret (at any depth), and the values of `${VAR}`s whose
 * names do (`${ACME_API_KEY}`), are scrubbed as the marked fields are.
 */
function unmarkedSecrets(config: Config, substituted: readonly { name: string; value: string }[]): string[] {
  const out = substituted.filter((s) => SECRET_VAR_RE.test(s.name)).map((s) => s.value);
  const walk = (v: unknown, key: string): void => {
    if (typeof v === 'string') {
      if (SECRET_KEY_RE.test(key)) out.push(v);
    } else if (Array.isArray(v)) for (const x of v) walk(x, key);
    else if (isObj(v)) for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  for (const sink of config.sinks) if (sink.type === 'module') walk(sink.options, '');
  return out.filter((v) => v.trim().length >= MIN_UNMARKED_SECRET);
}

/** Freezes `value` and everything reachable from it. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

function fail(source: string | undefined, problems: RawProblem[], secrets: readonly string[]): never {
  const scrubber = new SecretScrubber(secrets);
  const lines = problems.map((p) => scrubber.scrub(formatProblem(p)));
  const where = source ? ` in ${source}` : '';
  const head = `invalid configuration${where}: ${lines.length} problem${lines.length === 1 ? '' : 's'}`;
  throw new ConfigError(`${head}\n  ${lines.join('\n  ')}`, lines);
}

/** Loads and validates configuration files against one schema. */
export class ConfigLoader {
  readonly #parts: ConfigParts;

  constructor(parts: ConfigParts) {
    this.#parts = parts;
  }

  /** The schema of the file. */
  get schema(): ConfigSchema {
    return this.#parts.schema;
  }

  /** The JSON Schema (draft 2020-12) of the YAML file, with every description; written to config/mls.schema.json. */
  jsonSchema(): Record<string, unknown> {
    return z.toJSONSchema(this.#parts.schema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
  }

  /**
   * Every secret value of a loaded config (the token, and every field its schema marks
   * secret), for log redaction. {@link ConfigLoader.parse} registers them all with the
   * process's scrubber.
   */
  secrets(config: Config): string[] {
    return secretStrings(markedFields(this.#parts.schema, config)).filter((s) => s.length > 0);
  }

  /** Values at paths that hold secrets, to be scrubbed from problem messages. */
  #secretValues(raw: unknown, substituted: { name: string; value: string }[]): string[] {
    const out = substituted.filter((s) => SECRET_VAR_RE.test(s.name)).map((s) => s.value);
    out.push(...secretStrings(markedFields(this.#parts.schema, raw)));
    // a value with a line break is also scrubbed line by line, trimmed
    const parts = out.flatMap((v) => [v, ...v.split(/[\r\n]+/).map((p) => p.trim())]);
    return [...new Set(parts)].filter((v) => v.trim().length >= 4).sort((a, b) => b.length - a.length);
  }

  /**
   * Validates an in-memory configuration (as parsed from YAML, before interpolation) and
   * returns it parsed, with paths resolved against `baseDir`, the token resolved, deeply frozen.
   * Every secret of it is registered with the process's scrubber before it is returned, so
   * no part of mls (a sink, the client, a command) has a secret of the config that the logs,
   * errors and outputs do not know to cut out. Throws a ConfigError listing every problem.
   */
  parse(raw: unknown, options: ParseConfigOptions = {}): Config {
    const noEnv = options.noEnv === true;
    const env = noEnv ? {} : (options.env ?? process.env);
    const baseDir = path.resolve(options.baseDir ?? process.cwd());

    const interpolated = noEnv ? fillPlaceholders(raw, (v) => this.#schemaIssues(v)) : { ...interpolate(raw, env), satisfied: () => false };
    const value = interpolated.value;
    const problems: RawProblem[] = [...interpolated.problems];
    if (!isObj(value)) {
      const secrets = this.#secretValues({}, interpolated.substituted);
      fail(options.source, [{ path: [], message: `expected a mapping of sections (api, models, sinks, ...), got ${show(value)}` }], secrets);
    }
    // The models of models_file join the inline ones before validation, and are checked as they are.
    const unsetInModelsFile: string[] = [];
    const models = joinModelsFile(value, baseDir, env, noEnv ? (_path, name) => (unsetInModelsFile.push(name), 'placeholder') : undefined);
    problems.push(...models.problems);
    const secrets = this.#secretValues(value, [...interpolated.substituted, ...models.substituted]);

    const merged = applyModelDefaults(value);
    const parsed = this.#parts.schema.safeParse(merged.value, { error: configErrorMap });
    // A value whose interpolation failed was replaced by '', so its own problem says it all;
    // a bad default is said once, at model_defaults.
    const failedPaths = interpolated.problems.map((p) => p.path);
    const notShadowed = (p: RawProblem): boolean => !failedPaths.some((f) => isUnder(p.path, f)) && !interpolated.satisfied(p.path);
    if (!parsed.success) problems.push(...issuesToProblems(parsed.error.issues).filter((p) => notShadowed(p) && !merged.inherited(p.path)));
    problems.push(...crossCheck(value, this.#parts.checkSink).filter(notShadowed));
    problems.push(...checkModelSettings(merged.value.models).filter(notShadowed));
    const data = parsed.success ? (parsed.data as unknown as Omit<Config, 'api'> & { api: Omit<Config['api'], 'token'> & { token?: string } }) : undefined;
    if (data) {
      this.#resolvePaths(data, baseDir);
      if (this.#parts.validate) problems.push(...this.#parts.validate(data).filter(notShadowed));
    }

    let token: string | undefined;
    const apiFailed = problems.some((p) => p.path[0] === 'api' && (p.path[1] === 'token' || p.path[1] === 'token_file' || p.path.length === 1));
    const tokenStandsIn = noEnv && data !== undefined && data.api.token === undefined && (data.api.token_file === undefined || !existsSync(data.api.token_file));
    if (tokenStandsIn) token = STAND_IN_TOKEN;
    // Without a parsed config, a missing token is reported too, so one run shows everything.
    else if (!apiFailed && (data || (!noEnv && isObj(value.api) && value.api.token === undefined && value.api.token_file === undefined))) {
      const r = resolveToken(data?.api ?? {}, env);
      if (r.problem) problems.push(r.problem);
      token = r.token;
    }

    if (problems.length > 0 || !data || token === undefined) {
      fail(options.source, models.locate(problems), token === undefined ? secrets : [...secrets, token]);
    }
    if (noEnv) options.onStandIns?.({ variables: [...new Set([...interpolated.placeholders.flatMap((p) => p.names), ...unsetInModelsFile])], token: tokenStandsIn });
    const config = deepFreeze({ ...data, api: { ...data.api, token } } as Config);
    // Stand-ins are no secrets: scrubbing a word such as `placeholder` would garble the output.
    if (!noEnv) for (const s of [...this.secrets(config), ...unmarkedSecrets(config, [...interpolated.substituted, ...models.substituted])]) registerSecret(s);
    return config;
  }

  /** The schema's issues with a config as written (interpolated), for choosing stand-ins. */
  #schemaIssues(value: unknown): SchemaIssue[] {
    if (!isObj(value)) return [];
    const parsed = this.#parts.schema.safeParse(applyModelDefaults(value).value);
    return parsed.success ? [] : parsed.error.issues.map((i) => ({ path: i.path, values: 'values' in i ? (i.values as unknown[]) : undefined }));
  }

  /** Makes every path field (as the schema marks them) absolute, against `baseDir`. Mutates `data`. */
  #resolvePaths(data: unknown, baseDir: string): void {
    for (const f of markedFields(this.#parts.schema, data)) {
      if (!('path' in f.mark) || typeof f.value !== 'string') continue;
      // A module specifier that does not start with . or / names a package.
      if (f.mark.path === 'file' || f.value.startsWith('.') || path.isAbsolute(f.value)) f.set(path.resolve(baseDir, f.value));
    }
  }

  /**
   * Reads, interpolates and validates the YAML config file at `file`, resolving relative
   * paths against its directory. Returns the deeply frozen config; throws a ConfigError
   * listing every problem (a missing file or a YAML syntax error is one problem).
   */
  async load(file: string, env: NodeJS.ProcessEnv = process.env, options: Pick<ParseConfigOptions, 'noEnv' | 'onStandIns'> = {}): Promise<Config> {
    const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
      const why = err.code === 'ENOENT' ? 'does not exist' : err.code === 'EISDIR' ? 'is a directory' : `cannot be read (${err.code ?? String(err)})`;
      const problem = `config file ${file} ${why}; pass the path of a YAML config file with --config`;
      throw new ConfigError(problem, [problem], { cause: err });
    });
    return this.parse(parseYaml(text, file), { ...options, baseDir: path.dirname(path.resolve(file)), env, source: file });
  }
}

/** Parses YAML text into plain values; syntax errors become a ConfigError naming line and column. */
export function parseYaml(text: string, source = 'config'): unknown {
  let value: unknown;
  try {
    value = readYaml(text).value;
  } catch (err) {
    if (!(err instanceof YamlSyntaxError)) throw err;
    const problem = `${err.line === undefined ? 'YAML' : `line ${err.line}, column ${err.column}`}: ${err.reason}; fix the YAML syntax`;
    throw new ConfigError(`${source} is not valid YAML:\n  ${problem}`, [problem], { cause: err });
  }
  if (value === undefined || value === null) {
    const problem = '(top level): the file is empty; see config/examples for a starting point';
    throw new ConfigError(`invalid configuration in ${source}: ${problem}`, [problem]);
  }
  return value;
}
