//! Loads the configuration: reads the YAML file, interpolates `${VAR}`, validates against
//! the schema, checks what spans several fields, resolves relative paths and the API
//! token, then freezes the result. Every problem is collected before one ConfigError.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { ConfigError } from '../errors.js';
import { SecretScrubber } from '../telemetry/secrets.js';
import { interpolate, type PathSegment } from './interpolate.js';
import { configErrorMap, formatProblem, issuesToProblems, type RawProblem } from './problems.js';
import { configSchema, type Config } from './schema.js';
import { Fail, parseDurationValue, show } from './units.js';
import { fileOverlapProblems } from '../sinks/file/overlap.js';

/** Options of {@link parseConfig}. */
export interface ParseConfigOptions {
  /** Directory relative paths are resolved against (the config file's directory). Default: the working directory. */
  baseDir?: string;
  /** Environment for `${VAR}` interpolation and the token fallbacks. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Name used for the source in the error message (e.g. the file path). */
  source?: string;
}

/** Name of the environment variable the token falls back to. */
export const TOKEN_ENV = 'MLS_API_TOKEN';
/** Name of the systemd credential the token falls back to (under `$CREDENTIALS_DIRECTORY`). */
export const TOKEN_CREDENTIAL = 'mls-api-token';

const SECRET_VAR_RE = /TOKEN|SECRET|PASS|KEY|AUTH|CRED|SIGN/i;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function startsWith(path: readonly PathSegment[], prefix: readonly PathSegment[]): boolean {
  return prefix.length <= path.length && prefix.every((seg, i) => path[i] === seg);
}

/** Checks that span several fields, on the raw (interpolated) input, so they run even when other fields are broken. */
function crossCheck(raw: Obj): RawProblem[] {
  const problems: RawProblem[] = [];
  const dur = (v: unknown, dflt: string): number | undefined => {
    const r = parseDurationValue(v ?? dflt);
    return r instanceof Fail ? undefined : r;
  };

  const api = isObj(raw.api) ? raw.api : undefined;
  if (api && api.token !== undefined && api.token_file !== undefined) {
    problems.push({ path: ['api', 'token_file'], message: 'is set together with api.token; set only one of them' });
  }
  if (api && isObj(api.retry)) {
    const base = dur(api.retry.base_delay, '250ms');
    const max = dur(api.retry.max_delay, '30s');
    if (base !== undefined && max !== undefined && max < base) {
      problems.push({ path: ['api', 'retry', 'max_delay'], message: 'is shorter than api.retry.base_delay; raise max_delay or lower base_delay' });
    }
  }

  const poll = isObj(raw.poll) ? raw.poll : raw.poll === undefined ? {} : undefined;
  if (poll) {
    const lookback = dur(poll.lookback, '5m');
    const maxWindow = dur(poll.max_window, '1h');
    if (lookback !== undefined && maxWindow !== undefined && lookback >= maxWindow) {
      problems.push({
        path: ['poll', 'lookback'],
        message: `must be shorter than poll.max_window, otherwise poll windows could not advance (lookback ${show(poll.lookback ?? '5m')}, max_window ${show(poll.max_window ?? '1h')}); lower lookback or raise max_window`,
      });
    }
  }

  const modelIds = new Map<string, number>();
  if (Array.isArray(raw.models)) {
    raw.models.forEach((m, i) => {
      if (!isObj(m) || typeof m.id !== 'string' || m.id.trim() === '') return;
      const first = modelIds.get(m.id);
      if (first !== undefined) {
        problems.push({ path: ['models', i, 'id'], message: `${show(m.id)} is already the id of models[${first}]; model ids must be unique` });
      } else {
        modelIds.set(m.id, i);
      }
    });
  }

  if (Array.isArray(raw.sinks)) {
    const names = new Map<string, number>();
    raw.sinks.forEach((s, i) => {
      if (!isObj(s)) return;
      if (typeof s.name === 'string' && s.name !== '') {
        const first = names.get(s.name);
        if (first !== undefined) {
          problems.push({ path: ['sinks', i, 'name'], message: `${show(s.name)} is already the name of sinks[${first}]; sink names must be unique` });
        } else {
          names.set(s.name, i);
        }
      }
      if (Array.isArray(s.models) && Array.isArray(raw.models)) {
        const seen = new Set<string>();
        s.models.forEach((id, j) => {
          if (typeof id !== 'string' || id.trim() === '') return;
          if (!modelIds.has(id)) {
            const known = [...modelIds.keys()];
            problems.push({
              path: ['sinks', i, 'models', j],
              message: `${show(id)} is not a configured model id; use one of ${known.length > 0 ? known.join(', ') : '(none configured)'}`,
            });
          } else if (seen.has(id)) {
            problems.push({ path: ['sinks', i, 'models', j], message: `${show(id)} is listed twice; remove the duplicate` });
          }
          seen.add(id);
        });
      }
      if (isObj(s.retry)) {
        const base = dur(s.retry.base_delay, '500ms');
        const max = dur(s.retry.max_delay, '60s');
        if (base !== undefined && max !== undefined && max < base) {
          problems.push({ path: ['sinks', i, 'retry', 'max_delay'], message: 'is shorter than retry.base_delay; raise max_delay or lower base_delay' });
        }
      }
      if (s.type === 'otlp' && isObj(s.tls)) {
        const hasCert = s.tls.cert_file !== undefined;
        const hasKey = s.tls.key_file !== undefined;
        if (hasCert !== hasKey) {
          problems.push({
            path: ['sinks', i, 'tls', hasCert ? 'key_file' : 'cert_file'],
            message: `is required when tls.${hasCert ? 'cert_file' : 'key_file'} is set; client certificates need both cert_file and key_file`,
          });
        }
      }
    });
  }
  return problems;
}

/** Values at paths that hold secrets, to be scrubbed from problem messages. */
function secretValues(raw: Obj, substituted: { name: string; value: string }[]): string[] {
  const out = substituted.filter((s) => SECRET_VAR_RE.test(s.name)).map((s) => s.value);
  const api = isObj(raw.api) ? raw.api : {};
  if (typeof api.token === 'string') out.push(api.token);
  if (Array.isArray(raw.sinks)) {
    for (const s of raw.sinks) {
      if (!isObj(s)) continue;
      if (typeof s.signing_secret === 'string') out.push(s.signing_secret);
      if (isObj(s.headers)) for (const v of Object.values(s.headers)) if (typeof v === 'string') out.push(v);
    }
  }
  // a value with a line break is also scrubbed line by line, trimmed
  const parts = out.flatMap((v) => [v, ...v.split(/[\r\n]+/).map((p) => p.trim())]);
  return [...new Set(parts)].filter((v) => v.trim().length >= 4).sort((a, b) => b.length - a.length);
}

function readTokenFile(file: string): { token?: string; problem?: string } {
  let content: string;
  try {
    content = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    return { problem: `cannot read ${file} (${code}); check the path and its permissions` };
  }
  const token = content.replace(/(\r?\n)+$/, '');
  if (token.trim() === '') return { problem: `${file} is empty; write the token into it` };
  if (/[\r\n]/.test(token)) return { problem: `${file} holds more than one line; it must hold only the token` };
  return { token };
}

/** Resolves the token: api.token, api.token_file, $MLS_API_TOKEN, then `$CREDENTIALS_DIRECTORY/mls-api-token`. */
function resolveToken(api: { token?: string | undefined; token_file?: string | undefined }, env: NodeJS.ProcessEnv): { token?: string; problem?: RawProblem } {
  if (api.token !== undefined) return { token: api.token };
  if (api.token_file !== undefined) {
    const r = readTokenFile(api.token_file);
    return r.problem ? { problem: { path: ['api', 'token_file'], message: r.problem } } : { token: r.token! };
  }
  const fromEnv = env[TOKEN_ENV];
  if (fromEnv !== undefined && fromEnv.trim() !== '') {
    if (/[\r\n]/.test(fromEnv.replace(/(\r?\n)+$/, ''))) {
      return { problem: { path: ['api', 'token'], message: `${TOKEN_ENV} contains a line break; it must hold only the token` } };
    }
    return { token: fromEnv.replace(/(\r?\n)+$/, '') };
  }
  const credDir = env.CREDENTIALS_DIRECTORY;
  if (credDir) {
    const file = path.join(credDir, TOKEN_CREDENTIAL);
    const r = readTokenFile(file);
    if (r.token !== undefined) return { token: r.token };
    if (!r.problem?.includes('ENOENT')) return { problem: { path: ['api', 'token'], message: `systemd credential: ${r.problem}` } };
  }
  return {
    problem: { path: ['api', 'token'], message: `no token: set api.token, api.token_file, ${TOKEN_ENV} or a systemd credential` },
  };
}

/** Resolves a module specifier: paths starting with . or / are files (relative to `baseDir`), the rest package names. */
function resolveModulePath(spec: string, baseDir: string): string {
  return spec.startsWith('.') || path.isAbsolute(spec) ? path.resolve(baseDir, spec) : spec;
}

/** Makes every relative path of the config absolute, against `baseDir`. Mutates `config`. */
function resolvePaths(config: Config, baseDir: string): void {
  const abs = (p: string): string => path.resolve(baseDir, p);
  config.state.path = abs(config.state.path);
  if (config.api.token_file !== undefined) config.api.token_file = abs(config.api.token_file);
  if (config.api.ca_file !== undefined) config.api.ca_file = abs(config.api.ca_file);
  for (const sink of config.sinks) {
    switch (sink.type) {
      case 'file':
        sink.path = abs(sink.path);
        break;
      case 'module':
        sink.path = resolveModulePath(sink.path, baseDir);
        break;
      case 'webhook':
        if (sink.ca_file !== undefined) sink.ca_file = abs(sink.ca_file);
        break;
      case 'otlp':
        if (sink.tls) {
          if (sink.tls.ca_file !== undefined) sink.tls.ca_file = abs(sink.tls.ca_file);
          if (sink.tls.cert_file !== undefined) sink.tls.cert_file = abs(sink.tls.cert_file);
          if (sink.tls.key_file !== undefined) sink.tls.key_file = abs(sink.tls.key_file);
        }
        break;
      case 'stdout':
        break;
    }
  }
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

/**
 * Validates an in-memory configuration (as parsed from YAML, before interpolation) and
 * returns it parsed, with paths resolved against `baseDir`, the token resolved, deeply frozen.
 * Throws a ConfigError listing every problem.
 */
export function parseConfig(raw: unknown, options: ParseConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const baseDir = path.resolve(options.baseDir ?? process.cwd());

  const interpolated = interpolate(raw, env);
  const value = interpolated.value;
  const problems: RawProblem[] = [...interpolated.problems];
  const secrets = secretValues(isObj(value) ? value : {}, interpolated.substituted);
  if (!isObj(value)) {
    fail(options.source, [{ path: [], message: `expected a mapping of sections (api, models, sinks, ...), got ${show(value)}` }], secrets);
  }

  const parsed = configSchema.safeParse(value, { error: configErrorMap });
  // A value whose interpolation failed was replaced by '', so its own problem says it all.
  const failedPaths = interpolated.problems.map((p) => p.path);
  const notShadowed = (p: RawProblem): boolean => !failedPaths.some((f) => startsWith(p.path, f));
  if (!parsed.success) problems.push(...issuesToProblems(parsed.error.issues).filter(notShadowed));
  problems.push(...crossCheck(value).filter(notShadowed));
  if (parsed.success) problems.push(...fileOverlapProblems(parsed.data.sinks, parsed.data.models.map((m) => m.id), baseDir));

  let token: string | undefined;
  const apiFailed = problems.some((p) => p.path[0] === 'api' && (p.path[1] === 'token' || p.path[1] === 'token_file' || p.path.length === 1));
  if (parsed.success && !apiFailed) {
    const api = { ...parsed.data.api };
    if (api.token_file !== undefined) api.token_file = path.resolve(baseDir, api.token_file);
    const r = resolveToken(api, env);
    if (r.problem) problems.push(r.problem);
    token = r.token;
  } else if (!apiFailed && isObj(value.api) && value.api.token === undefined && value.api.token_file === undefined) {
    // Report a missing token even when other parts are broken, so one run shows everything.
    const r = resolveToken({}, env);
    if (r.problem) problems.push(r.problem);
  }

  if (problems.length > 0 || !parsed.success || token === undefined) {
    fail(options.source, problems, token === undefined ? secrets : [...secrets, token]);
  }

  const config = { ...parsed.data, api: { ...parsed.data.api, token } } as Config;
  resolvePaths(config, baseDir);
  return deepFreeze(config);
}

/**
 * Reads, interpolates and validates the YAML config file at `file`, resolving relative
 * paths against its directory. Returns the deeply frozen config; throws a ConfigError
 * listing every problem (a missing file or a YAML syntax error is one problem).
 */
export async function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Promise<Config> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code ?? String(err)})`;
    const problem = `config file ${file} ${why}; pass the path of a YAML config file with --config`;
    throw new ConfigError(problem, [problem], { cause: err });
  }
  return parseConfig(parseYaml(text, file), { baseDir: path.dirname(path.resolve(file)), env, source: file });
}

/** Parses YAML text into plain values; syntax errors become a ConfigError naming line and column. */
export function parseYaml(text: string, source = 'config'): unknown {
  const doc = parseDocument(text, { prettyErrors: true, merge: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const problems = doc.errors.map((e) => {
      const pos = e.linePos?.[0];
      const where = pos ? `line ${pos.line}, column ${pos.col}` : 'YAML';
      const what = e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
      return `${where}: ${what}; fix the YAML syntax`;
    });
    throw new ConfigError(`${source} is not valid YAML:\n  ${problems.join('\n  ')}`, problems);
  }
  if (doc.contents === null) {
    const problem = '(top level): the file is empty; see config/examples for a starting point';
    throw new ConfigError(`invalid configuration in ${source}: ${problem}`, [problem]);
  }
  return doc.toJS({ maxAliasCount: 100 });
}

/** Every secret value of a loaded config (token, signing secrets, header values), for log redaction. */
export function configSecrets(config: Config): string[] {
  const out = [config.api.token];
  for (const sink of config.sinks) {
    if (sink.type === 'webhook') {
      if (sink.signing_secret) out.push(sink.signing_secret);
      out.push(...Object.values(sink.headers));
    } else if (sink.type === 'otlp') {
      out.push(...Object.values(sink.headers));
    }
  }
  return out.filter((s) => s.length > 0);
}
