//! The configuration schema (zod): every key, its default and its description. Parsing
//! turns durations into milliseconds, sizes into bytes, rates, start points and file
//! modes into values; keys stay snake_case as written. Unknown keys are rejected.
//! The same schema yields the JSON Schema of the YAML file (`configJsonSchema`).
import { z } from 'zod';
import {
  Fail,
  parseDurationValue,
  parseFileModeValue,
  parseListen,
  parseRateLimitValue,
  parseSizeValue,
  parseStartAtValue,
  show,
  type RateLimit,
  type StartAt,
} from './units.js';
import { validateTemplate } from '../sinks/file/template.js';
import type { RawProblem } from './problems.js';

/** JSON Schema keywords attached to a leaf (merged into the generated schema). */
type JsonMeta = Record<string, unknown>;

/**
 * A leaf value parsed by a function rather than by zod primitives, so every message can
 * say what is wrong and how to fix it. `parse` returns the value, a `Fail`, or pushes
 * problems located below the leaf (e.g. one bad header among many).
 */
function leaf<T>(description: string, json: JsonMeta, parse: (value: unknown, nested: RawProblem[]) => T | Fail) {
  return z
    .unknown()
    .transform((value, ctx): T => {
      const nested: RawProblem[] = [];
      const result = value === undefined ? new Fail('is required') : parse(value, nested);
      for (const p of nested) ctx.addIssue({ code: 'custom', message: p.message, path: p.path, input: value });
      if (result instanceof Fail) ctx.addIssue({ code: 'custom', message: result.message, input: value });
      if (result instanceof Fail || nested.length > 0) return z.NEVER;
      return result;
    })
    .meta({ ...json, description });
}

const DURATION_JSON = { type: 'string', pattern: '^(\\d+(\\.\\d+)?(ms|s|m|h|d))+$' };
const SIZE_JSON = {
  anyOf: [
    { type: 'integer', minimum: 0 },
    { type: 'string', pattern: '^\\d+(\\.\\d+)?\\s*([KMGT]i?B|B)?$' },
  ],
};

/**
 * Lets a number or boolean field take a string, as `${VAR}` interpolation produces:
 * `"8"` → 8, `"true"` → true. Anything else goes to the inner schema unchanged.
 */
function scalar<T extends z.ZodType>(schema: T) {
  return z.preprocess((v) => {
    if (typeof v !== 'string') return v;
    const t = v.trim();
    if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
    return t === 'true' ? true : t === 'false' ? false : v;
  }, schema);
}

/** A duration (`500ms`, `10s`, `5m`, `1h`, `1d`, or compound `1h30m`), parsed to milliseconds. */
function duration(description: string, options: { positive?: boolean } = {}) {
  return leaf(description, DURATION_JSON, (v) => parseDurationValue(v, { min: options.positive ? 1 : 0 }));
}

/** A size (integer bytes or `64MiB`-style), parsed to bytes. */
function size(description: string, options: { positive?: boolean } = {}) {
  return leaf(description, SIZE_JSON, (v) => parseSizeValue(v, { min: options.positive ? 1 : 0 }));
}

/** A non-empty string (whitespace alone counts as empty). */
function text(description: string, json: JsonMeta = {}) {
  return leaf(description, { type: 'string', minLength: 1, ...json }, (v) => {
    if (typeof v !== 'string') return new Fail(`expected a non-empty string, got ${show(v)}`);
    if (v.trim() === '') return new Fail('expected a non-empty string');
    return v;
  });
}

/** A secret string: never echoed in problems. */
function secret(description: string) {
  return leaf(description, { type: 'string', minLength: 1 }, (v) => {
    if (typeof v !== 'string') return new Fail(`expected a string (the value is not shown because it is secret)`);
    if (v.trim() === '') return new Fail('is empty; set a value or remove the key');
    if (/[\r\n]/.test(v)) return new Fail('contains a line break; remove it (the value is not shown because it is secret)');
    return v;
  });
}

/** Where a sink's credentials go instead of its URL (the problem's path names the sink). */
const SINK_CREDENTIALS =
  "must not carry credentials (user:password@); remove them and send them as a header of this sink instead, e.g. headers: { Authorization: 'Basic ${MLS_SINK_AUTH}' } with MLS_SINK_AUTH set to the base64 of user:password";

/**
 * An http(s) URL. `stripSlash` drops trailing slashes so paths can be appended;
 * `credentials` says where credentials go instead of the URL (default: the API token).
 */
function httpUrl(description: string, options: { stripSlash?: boolean; noQuery?: boolean; credentials?: string } = {}) {
  return leaf(description, { type: 'string', format: 'uri', pattern: '^https?://' }, (v) => {
    if (typeof v !== 'string' || v.trim() === '') return new Fail(`expected an http or https URL, got ${show(v)}`);
    let url: URL;
    try {
      url = new URL(v.trim());
    } catch {
      return new Fail(`${show(v)} is not a URL; write e.g. https://api.example.com`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return new Fail(`${show(url.protocol)} is not supported; the URL must start with http:// or https://`);
    }
    if (options.noQuery && (url.search !== '' || url.hash !== '')) {
      return new Fail('must not carry a query string or fragment; keep only scheme, host, port and path prefix');
    }
    if (url.username !== '' || url.password !== '') {
      return new Fail(options.credentials ?? 'must not carry credentials; put the token in api.token or api.token_file');
    }
    const out = v.trim();
    return options.stripSlash ? out.replace(/\/+$/, '') : out;
  });
}

/** A file path; relative paths are resolved against the directory of the config file by the loader. */
function filePath(description: string) {
  return text(`${description} Relative paths are resolved against the directory of the config file.`);
}

/** A map of names to string values (numbers and booleans are turned into strings). */
function stringMap(description: string, options: { headers?: boolean } = {}) {
  const valueJson = { type: ['string', 'number', 'boolean'] };
  return leaf(description, { type: 'object', additionalProperties: valueJson }, (v, nested) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return new Fail(`expected a mapping of names to values, got ${show(v)}`);
    const out: Record<string, string> = {};
    for (const [k, val] of Object.entries(v)) {
      if (options.headers && !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k)) {
        nested.push({ path: [k], message: 'is not a valid HTTP header name; use letters, digits and - (e.g. X-Api-Key)' });
        continue;
      }
      if (k === '') {
        nested.push({ path: [k], message: 'names must not be empty' });
        continue;
      }
      if (typeof val === 'string') {
        if (options.headers && /[\r\n]/.test(val)) {
          nested.push({ path: [k], message: 'contains a line break, which HTTP headers cannot carry; remove it' });
          continue;
        }
        out[k] = val;
      } else if ((typeof val === 'number' && Number.isFinite(val)) || typeof val === 'boolean') {
        out[k] = String(val);
      } else {
        nested.push({ path: [k], message: `expected a string, got ${options.headers ? 'another kind of value' : show(val)}` });
      }
    }
    return out;
  });
}

const SEVERITIES = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'] as const;
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
    timeouts: z
      .strictObject({
        connect: duration('Time allowed to establish the TCP/TLS connection.', { positive: true }).prefault('10s'),
        headers: duration('Time allowed from sending a request until the response headers arrive.', { positive: true }).prefault('30s'),
        body: duration('Time allowed to receive the whole response body.', { positive: true }).prefault('60s'),
      })
      .prefault({})
      .describe('Timeouts of requests to the service.'),
    retry: z
      .strictObject({
        deadline: duration('Give up retrying one request after this long (the poll then tries again later).', { positive: true }).prefault('2m'),
        base_delay: duration('First backoff delay; doubles on each attempt, with full jitter.', { positive: true }).prefault('250ms'),
        max_delay: duration('Upper bound of one backoff delay.', { positive: true }).prefault('30s'),
      })
      .prefault({})
      .describe('Retries of failed requests (network errors, 429, 5xx).'),
    max_response_bytes: size('Largest response body accepted from the service; larger responses are an error.', { positive: true }).prefault(
      '64MiB',
    ),
    ca_file: filePath('PEM file of extra certificate authorities to trust for the service.').optional(),
    insecure_skip_verify: scalar(z.boolean().default(false)).describe('Do not verify the TLS certificate of the service. Only for testing: anyone on the path can read the token.'),
  })
  .describe('The model-management service to poll.');

// ---------------------------------------------------------------------------------------
// state, poll, models

const stateSchema = z
  .strictObject({
    path: filePath('SQLite file holding checkpoints, the journal and sink cursors.').prefault('/var/lib/mls/state.db'),
  })
  .describe('Where the daemon keeps its state.');

const START_AT_JSON = {
  type: 'string',
  pattern: '^(now|-(\\d+(\\.\\d+)?(ms|s|m|h|d))+|\\d{4}-\\d{2}-\\d{2}.*)$',
};

function startAt(description: string) {
  return leaf<StartAt>(description, START_AT_JSON, parseStartAtValue);
}

const pollSchema = z
  .strictObject({
    interval: duration('Time between two polls of one model (jittered by `jitter`).', { positive: true }).prefault('10s'),
    lookback: duration(
      'Each window starts this far before the checkpoint, to catch entries the service indexes late. Must be shorter than max_window.',
    ).prefault('5m'),
    settle: duration('Windows end this far before now, so entries still being written are not missed.').prefault('2s'),
    start_at: startAt(
      'Where to start for a model without a checkpoint: `now`, a duration back from now such as `-1h`, or an ISO timestamp such as `2026-01-01T00:00:00Z`.',
    ).prefault('-1h'),
    max_window: duration('Longest time window asked for in one request; longer catch-ups are split.', { positive: true }).prefault('1h'),
    concurrency: scalar(z.number().int().min(1).default(8)).describe('Requests in flight at once, across all models.'),
    rate_limit: leaf<RateLimit | null>(
      'Requests allowed per interval across all models: `N/s`, `N/m`, `N/h` (e.g. `20/s`), or `0` / `none` for no limit. Parsed to `{count, perMs}` or null.',
      { anyOf: [{ const: 0 }, { type: 'string', pattern: '^(none|0|\\d+\\s*/\\s*\\S+)$' }] },
      parseRateLimitValue,
    ).prefault('20/s'),
    jitter: scalar(z.number().min(0).lt(1).default(0.1)).describe('Random spread of the interval, as a fraction: 0.1 = ±10%.'),
    window_limits: z
      .strictObject({
        max_pages: scalar(z.number().int().min(1).default(5_000)).describe(
          'Most pages read in one fetch of a window. A fetch that reaches it is started again on a window of half the span (not under 1s); a 1s window that still reaches it is completed as read and reported at error level.',
        ),
        max_duration: duration(
          'Longest time one fetch of a window may take (pauses while the journal is full do not count). Reaching it shortens the window as max_pages does.',
          { positive: true },
        ).prefault('10m'),
      })
      .prefault({})
      .describe('Bounds of one window fetch, so that a service that pages without end cannot hold a model in one window forever.'),
    auth_retry: duration('After the service refuses the token for a model, poll that model again after this long, doubling up to 10m; other models go on.', { positive: true }).prefault('30s'),
    reread: z
      .strictObject({
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
      })
      .prefault({})
      .describe('How spans before the checkpoint are read again to catch late entries.'),
  })
  .describe('How often and how far back models are polled.');

/** Schema of one entry of `models`. */
export const modelSchema = z
  .strictObject({
    id: text('The model_id of the model on the service.'),
    is_less_logs: scalar(z.boolean().optional()).describe('Sent as is_less_logs with every request for this model; left out when not set.'),
    start_at: startAt('Overrides poll.start_at for this model.').optional(),
    resource: stringMap('OTLP resource attributes for this model (e.g. service.name: billing-model), added to every OTLP sink.').prefault({}),
  })
  .describe('A model whose logs are shipped.');

// ---------------------------------------------------------------------------------------
// sinks

const sinkName = leaf<string>(
  'Unique name of the sink: letters, digits, _ and -. Used in metrics, logs and state.',
  { type: 'string', pattern: '^[A-Za-z0-9_-]+$' },
  (v) => {
    if (typeof v !== 'string' || v === '') return new Fail(`expected a non-empty string, got ${show(v)}`);
    if (!/^[A-Za-z0-9_-]+$/.test(v)) return new Fail(`${show(v)} is not a valid sink name; use only letters, digits, _ and -`);
    return v;
  },
);

/**
 * The fields every sink takes. A batch is what a network sink sends in one request, so
 * its default size suits receivers' limits; for the file and stdout sinks it is only the
 * unit of a write and an fsync, so their default is larger: a sink that has fallen behind
 * catches up in a few large writes instead of many small ones, each waiting its turn.
 */
const sinkFields = (batch: { maxEntries: number; maxBytes: string }) => ({
  name: sinkName,
  batch: z
    .strictObject({
      max_entries: scalar(z.number().int().min(1).default(batch.maxEntries)).describe('Most entries in one batch.'),
      max_bytes: size('Most bytes (of log text) in one batch.', { positive: true }).prefault(batch.maxBytes),
      max_delay: duration('Longest time an entry waits for its batch to fill.', { positive: true }).prefault('1s'),
    })
    .prefault({})
    .describe('How entries are grouped before they are sent.'),
  retry: z
    .strictObject({
      base_delay: duration('First delay after a failed send; doubles on each attempt.', { positive: true }).prefault('500ms'),
      max_delay: duration('Upper bound of the delay between attempts.', { positive: true }).prefault('60s'),
    })
    .prefault({})
    .describe('Backoff between attempts to send a batch that failed.'),
  models: z
    .array(text('A configured model id.'))
    .min(1)
    .optional()
    .describe('Only these models go to this sink (each must be a configured model id). All models when not set.'),
});
/** Network and custom sinks: batches of at most 1,000 entries or 1 MiB of text. */
const sinkCommon = sinkFields({ maxEntries: 1000, maxBytes: '1MiB' });
/** File and stdout sinks: batches of at most 20,000 entries or 8 MiB of text. */
const textSinkCommon = sinkFields({ maxEntries: 20_000, maxBytes: '8MiB' });

const fileSinkSchema = z
  .strictObject({
    type: z.literal('file').describe('Appends NDJSON to local files.'),
    ...textSinkCommon,
    path: leaf<string>(
      'File path template: {model_id} and the UTC strftime parts %Y %m %d %H %M %S %j (%% = a literal %). E.g. ./out/{model_id}/%Y-%m-%d.ndjson. Relative paths are resolved against the directory of the config file.',
      { type: 'string', minLength: 1 },
      (v) => {
        if (typeof v !== 'string' || v.trim() === '') return new Fail(`expected a non-empty string, got ${show(v)}`);
        const problem = validateTemplate(v);
        return problem ? new Fail(problem) : v;
      },
    ),
    fsync: z
      .enum(['always', 'batch', 'never'])
      .default('batch')
      .describe('When to fsync: after every write (`always`), before a batch is acknowledged (`batch`), or never (the OS decides).'),
    rotate: z
      .strictObject({
        max_bytes: size('Start a new file when the current one reaches this size.', { positive: true }).optional(),
        max_age: duration('Start a new file when the current one is this old.', { positive: true }).optional(),
      })
      .optional()
      .describe('Rotation within one rendered path; rotated files get a numbered suffix.'),
    compress: z.enum(['none', 'gzip']).default('none').describe('Compression of rotated files.'),
    file_mode: leaf<number>('Permissions of created files, as a quoted octal string.', { type: 'string', pattern: '^(0o|0)?[0-7]{3,4}$' }, parseFileModeValue).prefault(
      '0600',
    ),
    dir_mode: leaf<number>(
      'Permissions of created directories, as a quoted octal string.',
      { type: 'string', pattern: '^(0o|0)?[0-7]{3,4}$' },
      parseFileModeValue,
    ).prefault('0700'),
  })
  .describe('File sink.');

const stdoutSinkSchema = z
  .strictObject({
    type: z.literal('stdout').describe('Writes NDJSON to standard output.'),
    ...textSinkCommon,
  })
  .describe('Stdout sink.');

const webhookSinkSchema = z
  .strictObject({
    type: z.literal('webhook').describe('POSTs batches to an HTTP endpoint.'),
    ...sinkCommon,
    url: httpUrl('URL the batches are POSTed to.', { credentials: SINK_CREDENTIALS }),
    format: z.enum(['ndjson', 'json']).default('ndjson').describe('Body format: one JSON object per line (`ndjson`) or one JSON array (`json`).'),
    compression: z.enum(['none', 'gzip']).default('none').describe('Compression of the request body.'),
    headers: stringMap('Extra request headers (values are treated as secrets).', { headers: true }).prefault({}),
    timeout: duration('Time allowed for one request.', { positive: true }).prefault('30s'),
    concurrency: scalar(z.number().int().min(1).default(1)).describe('Requests in flight at once for this sink. Above 1, batches may arrive out of order.'),
    signing_secret: secret('When set, each request carries an HMAC-SHA256 signature of its body made with this secret.').optional(),
    ca_file: filePath('PEM file of extra certificate authorities to trust for this endpoint.').optional(),
  })
  .describe('Webhook sink.');

const otlpSinkSchema = z
  .strictObject({
    type: z.literal('otlp').describe('Exports OpenTelemetry log records.'),
    ...sinkCommon,
    endpoint: httpUrl(
      'Base URL of the OTLP receiver; default http://localhost:4318 for HTTP and http://localhost:4317 for gRPC. /v1/logs is appended for HTTP unless already there.',
      { stripSlash: true, credentials: SINK_CREDENTIALS },
    ).optional(),
    protocol: z.enum(['http/protobuf', 'http/json', 'grpc']).default('http/protobuf').describe('OTLP transport.'),
    headers: stringMap('Extra request headers or gRPC metadata (values are treated as secrets).', { headers: true }).prefault({}),
    compression: z.enum(['gzip', 'none']).default('gzip').describe('Compression of the export requests.'),
    timeout: duration('Time allowed for one export.', { positive: true }).prefault('10s'),
    resource: stringMap('Resource attributes added to every record (per-model attributes take precedence).').prefault({}),
    severity: z
      .record(z.string().min(1), z.enum(SEVERITIES))
      .optional()
      .describe('Severity text per stream, e.g. {stderr: ERROR}; streams not listed carry no severity.'),
    tls: z
      .strictObject({
        ca_file: filePath('PEM file of extra certificate authorities to trust.').optional(),
        cert_file: filePath('Client certificate (PEM) for mutual TLS; needs key_file.').optional(),
        key_file: filePath('Client private key (PEM) for mutual TLS; needs cert_file.').optional(),
        insecure: scalar(z.boolean().default(false)).describe('Do not verify the receiver certificate. Only for testing.'),
      })
      .optional()
      .describe('TLS settings of the connection to the receiver.'),
  })
  .describe('OTLP sink.');

const moduleSinkSchema = z
  .strictObject({
    type: z.literal('module').describe('Loads a sink from a JavaScript module.'),
    ...sinkCommon,
    path: text(
      'ES module whose default export (or `createSink` export) builds the sink. A path starting with . or / is a file, resolved against the directory of the config file; anything else is a package name.',
    ),
    options: z.record(z.string(), z.unknown()).default({}).describe('Free-form options passed to the module.'),
    timeout: duration(
      'Longest one call of the module may take. A send still running after it counts as a retry (the AbortSignal passed to send fires, whether or not the module heeds it); a flush or close (at reload or shutdown) is waited for no longer.',
      { positive: true },
    ).prefault('30s'),
  })
  .describe('Custom module sink.');

/** Schema of one entry of `sinks`. */
export const sinkSchema = z
  .discriminatedUnion('type', [fileSinkSchema, stdoutSinkSchema, webhookSinkSchema, otlpSinkSchema, moduleSinkSchema])
  .describe('A destination of log entries. `type` selects the kind; the other keys depend on it.');

// ---------------------------------------------------------------------------------------
// the rest

const bufferSchema = z
  .strictObject({
    max_entries: scalar(z.number().int().min(1).default(1_000_000)).describe('Most entries kept in the journal and not yet delivered to every sink.'),
    max_bytes: size('Most bytes kept in the journal and not yet delivered to every sink.', { positive: true }).prefault('1GiB'),
    when_full: z
      .enum(['block', 'drop_oldest'])
      .default('block')
      .describe('When full: `block` pauses polling until sinks catch up (no loss); `drop_oldest` drops undelivered entries (counted in metrics).'),
  })
  .describe('Bound of the journal of entries not yet delivered.');

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

const healthSchema = z
  .strictObject({
    max_lag: duration(
      '/readyz fails (and names the model or sink) when a model\'s watermark is further behind now than this, or a sink has been failing (retries, errors, no acknowledgement) for longer than this.',
      { positive: true },
    ).prefault('5m'),
  })
  .describe('Health checks.');

const logSchema = z
  .strictObject({
    level: z.enum(LOG_LEVELS).default('info').describe('Least severe level of the daemon’s own logs (written to stderr).'),
  })
  .describe('The daemon’s own logs.');

/** The whole configuration file. */
export const configSchema = z
  .strictObject({
    api: apiSchema,
    state: stateSchema.prefault({}),
    poll: pollSchema.prefault({}),
    models: z.array(modelSchema).min(1).describe('The models to poll; at least one, ids unique.'),
    sinks: z.array(sinkSchema).min(1).describe('Where entries go; at least one, names unique.'),
    buffer: bufferSchema.prefault({}),
    admin: adminSchema.optional(),
    health: healthSchema.prefault({}),
    shutdown_timeout: duration('Longest a graceful shutdown may take before the daemon exits anyway.', { positive: true }).prefault('30s'),
    log: logSchema.prefault({}),
  })
  .meta({ title: 'model-log-shipper (mls) configuration', description: 'Configuration file of mls, the model log shipper (YAML).' });

type ParsedConfig = z.output<typeof configSchema>;

/** The `api` section after loading: the token is resolved (from `token`, `token_file`, the environment or a credential). */
export type ApiConfig = Omit<ParsedConfig['api'], 'token'> & {
  /** The workspace API token, resolved. Secret: never log it. */
  token: string;
};

/** A loaded, validated configuration (deeply frozen). Durations are ms, sizes bytes, paths absolute. */
export type Config = Omit<ParsedConfig, 'api'> & { api: ApiConfig };

/** One configured model. */
export type ModelConfig = z.output<typeof modelSchema>;
/** One configured sink, any type. */
export type SinkConfig = z.output<typeof sinkSchema>;
/** A `type: file` sink. */
export type FileSinkConfig = Extract<SinkConfig, { type: 'file' }>;
/** A `type: stdout` sink. */
export type StdoutSinkConfig = Extract<SinkConfig, { type: 'stdout' }>;
/** A `type: webhook` sink. */
export type WebhookSinkConfig = Extract<SinkConfig, { type: 'webhook' }>;
/** A `type: otlp` sink. */
export type OtlpSinkConfig = Extract<SinkConfig, { type: 'otlp' }>;
/** A `type: module` sink. */
export type ModuleSinkConfig = Extract<SinkConfig, { type: 'module' }>;
/** The sink types. */
export type SinkType = SinkConfig['type'];
/** Levels of the daemon's own log. */
export type LogLevel = (typeof LOG_LEVELS)[number];
/** OTLP severity texts. */
export type SeverityText = (typeof SEVERITIES)[number];

/** The JSON Schema (draft 2020-12) of the YAML file, with the descriptions above; written to config/mls.schema.json. */
export function configJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(configSchema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
}
