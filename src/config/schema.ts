//! The configuration schema (zod) of every section but the sinks' own fields: every key,
//! its default and its description. Parsing turns durations into milliseconds, sizes into
//! bytes, rates, start points and file modes into values; keys stay snake_case as written.
//! Unknown keys are rejected. `buildConfigSchema` joins these sections with the schemas
//! of the sink types a build has, and the keys they add to `models[]`.
import { z } from 'zod';
import { Fail, parseDurationValue, parseListen, parseRateLimitValue, parseStartAtValue, show, type RateLimit, type StartAt } from './units.js';
import { duration, filePath, httpUrl, inOrder, leaf, proxyUrl, scalar, secret, section, size, text } from './fields.js';
import { WINDOW_LIMITS_DEFAULTS } from './defaults.js';
import { processingSchema } from './processing.js';
import { settingsApplySchema, settingsSchema } from './settings-fields.js';

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;

// ---------------------------------------------------------------------------------------
// api

const apiSchema = z
  .strictObject({
    base_url: httpUrl(
      'Base URL of the model-management service, http or https, optionally with a path prefix (e.g. https://api.example.com/v1). Trailing slashes are dropped.',
      { stripSlash: true, noQuery: true },
    ),
    token: secret(
      'Workspace API token, sent in the Authorization header. Usually `${MLS_API_TOKEN}`. Set at most one of token and token_file; with neither, the token comes from the environment variable MLS_API_TOKEN, then from the systemd credential mls-api-token.',
    ).optional(),
    token_file: filePath('File holding the workspace API token (a trailing newline is ignored), e.g. /run/secrets/mls-token.').optional(),
    auth_scheme: z
      .enum(['raw', 'bearer'])
      .default('raw')
      .describe('How the token is sent: `raw` = the Authorization header is the token itself (what the service expects); `bearer` = `Bearer <token>`.'),
    timeouts: section('Timeouts of requests to the service.', {
      connect: duration('Time allowed to establish the TCP/TLS connection.', { positive: true }).prefault('10s'),
      headers: duration('Time allowed from sending a request until the response headers arrive.', { positive: true }).prefault('30s'),
      body: duration('Most time between two pieces of the response body; retry.deadline bounds the whole request.', { positive: true }).prefault('60s'),
    }),
    retry: section('Retries of failed requests (network errors, 429, 5xx).', {
      deadline: duration('Give up retrying one request after this long (the poll then tries again later).', { positive: true }).prefault('2m'),
      base_delay: duration('First backoff delay; doubles on each attempt, with full jitter.', { positive: true }).prefault('250ms'),
      max_delay: duration('Upper bound of one backoff delay.', { positive: true }).prefault('30s'),
    }).check(inOrder('base_delay', 'max_delay', { at: 'max_delay', message: () => 'is shorter than api.retry.base_delay; raise max_delay or lower base_delay' })),
    max_response_bytes: size('Largest response body accepted from the service; larger responses are an error.', { positive: true }).prefault(
      '64MiB',
    ),
    ca_file: filePath(
      "PEM file of extra certificate authorities to trust for the service, besides Node's default ones (its bundled roots and NODE_EXTRA_CA_CERTS).",
    ).optional(),
    insecure_skip_verify: scalar(z.boolean().default(false)).describe('Do not verify the TLS certificate of the service. Only for testing: anyone on the path can read the token.'),
    proxy: proxyUrl(
      'Proxy for the service: an http:// or https:// URL, credentials allowed (http://user:password@proxy:3128; treated as a secret), or `none` to connect directly. Without it, HTTP_PROXY, HTTPS_PROXY and NO_PROXY (lower or upper case) apply.',
    ).optional(),
  })
  .describe('The model-management service to poll.');

// ---------------------------------------------------------------------------------------
// state, poll, models

const stateSchema = section('Where the daemon keeps its state.', {
  path: filePath('SQLite file holding checkpoints, the journal and sink cursors.').prefault('/var/lib/mls/state.db'),
});

const START_AT_JSON = {
  type: 'string',
  pattern: '^(now|-(\\d+(\\.\\d+)?(ms|s|m|h|d))+|\\d{4}-\\d{2}-\\d{2}.*)$',
};

function startAt(description: string) {
  return leaf<StartAt>(description, START_AT_JSON, parseStartAtValue);
}

const pollSchema = section('How often and how far back models are polled.', {
  interval: duration('Time between two polls of one model (jittered by `jitter`).', { positive: true }).prefault('10s'),
  lookback: duration(
    'Each window starts this far before the checkpoint, to catch entries the service indexes late. Must be shorter than max_window.',
  ).prefault('5m'),
  min_interval: duration(
    'Shortest time between two polls of one model. A model whose last poll returned new entries is polled again after this long, a quiet one backs off to `interval`. Not longer than `interval` (when `interval` is shorter and this is not set, it is `interval`).',
    { positive: true },
  ).optional(),
  settle: leaf<number | 'auto'>(
    'Windows end this far before now, so entries still being written are not missed. `auto` (default): learned per model from how late its entries become visible (between 0 and half the first of `reread.ages`, 2s until enough entries were seen), and the first re-read then comes as early as those delays allow. A duration fixes it.',
    { anyOf: [{ const: 'auto' }, { type: 'string', pattern: '^(\\d+(\\.\\d+)?(ms|s|m|h|d))+$' }] },
    (v) => {
      if (typeof v === 'string' && v.trim() === 'auto') return 'auto';
      const ms = parseDurationValue(v);
      return ms instanceof Fail ? new Fail(`${ms.message}, or auto to learn it per model`) : ms;
    },
  ).prefault('auto'),
  start_at: startAt(
    'Where to start for a model without a checkpoint: `now`, a duration back from now such as `-1h`, or an ISO timestamp such as `2026-01-01T00:00:00Z`.',
  ).prefault('-1h'),
  max_window: duration('Longest time window asked for in one request; longer catch-ups are split.', { positive: true }).prefault('1h'),
  concurrency: scalar(z.number().int().min(1).default(8)).describe('Requests in flight at once, across all models; the service client keeps as many keep-alive HTTP/1.1 connections.'),
  rate_limit: leaf<RateLimit | null>(
    'Requests allowed per interval across all models: `N/s`, `N/m`, `N/h` (e.g. `20/s`), or `0` / `none` for no limit. Parsed to `{count, perMs}` or null.',
    { anyOf: [{ const: 0 }, { type: 'string', pattern: '^(none|0|\\d+\\s*/\\s*\\S+)$' }] },
    parseRateLimitValue,
  ).prefault('20/s'),
  jitter: scalar(z.number().min(0).lt(1).default(0.1)).describe('Random spread of the interval, as a fraction: 0.1 = ±10%.'),
  window_limits: section('Bounds of one window fetch, so that a service that pages without end cannot hold a model in one window forever.', {
    max_pages: scalar(z.number().int().min(1).default(WINDOW_LIMITS_DEFAULTS.max_pages)).describe(
      'Most pages read in one fetch of a window. A fetch that reaches it is started again on a window of half the span (not under 1s); a 1s window that still reaches it is completed as read and reported at error level.',
    ),
    max_duration: duration(
      'Longest time one fetch of a window may take (pauses while the journal is full do not count). Reaching it shortens the window as max_pages does.',
      { positive: true },
    ).prefault(WINDOW_LIMITS_DEFAULTS.max_duration),
  }),
  auth_retry: duration('After the service refuses the token for a model, poll that model again after this long, doubling up to 10m; other models go on.', { positive: true }).prefault('30s'),
  reread: section('How spans before the checkpoint are read again to catch late entries.', {
    mode: z
      .enum(['sparse', 'sliding'])
      .default('sparse')
      .describe(
        '`sparse`: each poll reads only the new span; older spans are read again once they are older than each of `ages`, and a last time once older than `lookback` (about 2 + ages reads per entry). `sliding`: each poll re-reads the whole lookback (about lookback/interval reads per entry). Both deliver every entry that becomes visible within `lookback` of its timestamp.',
      ),
    ages: z
      .array(duration('An age at which spans are read again.', { positive: true }))
      .prefault(['30s'])
      .describe('Ages (shorter than lookback) at which `sparse` reads a span again before the final read at `lookback`; shorter ages deliver late entries sooner.'),
  }),
}).check(
  inOrder('lookback', 'max_window', {
    at: 'lookback',
    strict: true,
    message: (lookback, maxWindow) =>
      `must be shorter than poll.max_window, otherwise poll windows could not advance (lookback "${lookback}", max_window "${maxWindow}"); lower lookback or raise max_window`,
  }),
  inOrder('min_interval', 'interval', {
    at: 'min_interval',
    message: (minInterval, interval) =>
      `is longer than poll.interval (min_interval "${minInterval}", interval "${interval}"); a quiet model is polled every interval and an active one every min_interval, so lower min_interval or raise interval`,
  }),
);

/** An entry of `models` without the keys that sink types add. */
const baseModelSchema = z.strictObject({
  id: text('The model_id of the model on the service.'),
  is_less_logs: scalar(z.boolean().optional()).describe('Sent as is_less_logs with every request for this model; left out when not set.'),
  start_at: startAt('Overrides poll.start_at for this model.').optional(),
  settings: settingsSchema.optional(),
});

// ---------------------------------------------------------------------------------------
// the rest

const bufferSchema = section('Bound of the journal of entries not yet delivered.', {
  max_entries: scalar(z.number().int().min(1).default(1_000_000)).describe('Most entries kept in the journal and not yet delivered to every sink.'),
  max_bytes: size('Most bytes kept in the journal and not yet delivered to every sink.', { positive: true }).prefault('1GiB'),
  when_full: z
    .enum(['block', 'drop_oldest'])
    .default('block')
    .describe('When full: `block` pauses polling until sinks catch up (no loss); `drop_oldest` drops undelivered entries (counted in metrics).'),
});

const adminSchema = z
  .strictObject({
    listen: leaf<string>(
      'Address of the admin HTTP server (/metrics, /healthz, /readyz, /status): host:port, [ipv6]:port or :port.',
      { type: 'string', pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]*):\\d{1,5}$' },
      (v) => {
        if (typeof v !== 'string' || !parseListen(v)) return new Fail(`${show(v)} is not a listen address; write host:port such as 127.0.0.1:9464`);
        return v.trim();
      },
    ),
  })
  .describe('The admin HTTP server; it runs only when this section is present.');

const healthSchema = section('Health checks.', {
  max_lag: duration(
    '/readyz fails (and names the model or sink) when a model\'s watermark is further behind now than this, or a sink has been failing (retries, errors, no acknowledgement) for longer than this.',
    { positive: true },
  ).prefault('5m'),
});

const logSchema = section('The daemon’s own logs.', {
  level: z.enum(LOG_LEVELS).default('info').describe('Least severe level of the daemon’s own logs (written to stderr).'),
  format: z
    .enum(['json', 'pretty', 'auto'])
    .default('auto')
    .describe('How each line is written: `json` (one object per line, for a log collector), `pretty` (one readable line, for a person), or `auto`: pretty when stderr is a terminal, JSON otherwise. `--log-format` overrides it.'),
});

/** A sink type's schema: a strict object whose `type` is a literal. */
export type SinkSchema = z.ZodObject<{ type: z.ZodLiteral<string> } & z.ZodRawShape>;

/**
 * The schema of the whole configuration file, with `sinkSchemas` as the kinds of entry of
 * `sinks` (told apart by `type`) and `modelKeys` as the keys sink types add to each entry
 * of `models`.
 */
export function buildConfigSchema(sinkSchemas: readonly SinkSchema[], modelKeys: Readonly<Record<string, z.ZodType>> = {}) {
  if (sinkSchemas.length === 0) throw new Error('bug: a configuration needs at least one sink type');
  const modelSchema = baseModelSchema.extend(modelKeys).describe('A model whose logs are shipped.');
  const sinkSchema = z
    .discriminatedUnion('type', sinkSchemas as unknown as [SinkSchema, ...SinkSchema[]])
    .describe('A destination of log entries. `type` selects the kind; the other keys depend on it.');
  return z
    .strictObject({
      api: apiSchema,
      state: stateSchema,
      poll: pollSchema,
      models: z
        .array(modelSchema)
        .optional()
        .describe('The models to poll, ids unique. With models_file, these and the file\'s models together; at least one model in all.'),
      models_file: filePath(
        'File listing more models (e.g. thousands): YAML (.yaml, .yml, .json), a list of entries like those of models or of plain ids, or plain text (.txt), one model id per line, blank lines and # comments skipped; another name is read as YAML when its first line (past blanks and comments) starts with - or [. Its models join those of models; an id listed twice is an error. Read again at every reload.',
      ).optional(),
      model_defaults: modelSchema
        .omit({ id: true })
        .optional()
        .describe('Defaults of every key of `models[]` but `id`: a model\'s own value wins; `settings` are merged field by field.'),
      settings_apply: settingsApplySchema,
      sinks: z.array(sinkSchema).min(1).describe('Where entries go; at least one, names unique.'),
      processing: processingSchema,
      buffer: bufferSchema,
      admin: adminSchema.optional(),
      health: healthSchema,
      shutdown_timeout: duration('Longest a graceful shutdown may take before the daemon exits anyway.', { positive: true }).prefault('30s'),
      log: logSchema,
    })
    .meta({
      title: 'model-log-shipper (mls) configuration',
      description: 'Configuration file of mls, the model log shipper (YAML).',
      anyOf: [{ required: ['models'] }, { required: ['models_file'] }],
    });
}

/** A schema made by {@link buildConfigSchema}. */
export type ConfigSchema = ReturnType<typeof buildConfigSchema>;

/**
 * The parsed config block of each sink type, by `type`. Empty here: each sink folder adds
 * its own by declaration merging (`declare module` … `interface SinkConfigs { <type>:
 * <Type>SinkConfig }`), so this module names no sink and {@link SinkConfig} still tells
 * the types apart.
 */
export interface SinkConfigs {}

/** Keys that sink types add to every entry of `models`, filled in the same way. */
export interface ModelKeys {}

/** One configured sink, any type. */
export type SinkConfig = SinkConfigs[keyof SinkConfigs];

type ParsedConfig = z.output<ConfigSchema>;

/** The `api` section after loading: the token is resolved (from `token`, `token_file`, the environment or a credential). */
export type ApiConfig = Omit<ParsedConfig['api'], 'token'> & {
  /** The workspace API token, resolved. Secret: never log it. */
  token: string;
};

/** One configured model. */
export type ModelConfig = z.output<typeof baseModelSchema> & ModelKeys;

/** A loaded, validated configuration (deeply frozen). Durations are ms, sizes bytes, paths absolute. */
export type Config = Omit<ParsedConfig, 'api' | 'models' | 'sinks'> & { api: ApiConfig; models: ModelConfig[]; sinks: SinkConfig[] };
