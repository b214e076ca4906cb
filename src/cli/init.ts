//! `mls init --models a,b --sink TYPE [--output PATH]`: a commented starter config (the
//! service, the token from `MLS_API_TOKEN`, the state file, the models, one sink) that
//! `mls validate --no-env` accepts as written. Printed, or written to a file that does not
//! exist yet (`--force` overwrites).
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { processIo, runCommand, writeOutput, type CommandIo } from './common.js';

/** The sink of the starter config, by type: its block's lines (indented for `sinks:`), with comments. */
const SINKS = {
  file: [
    '  - name: archive',
    '    type: file',
    '    # One NDJSON file per model and UTC day; exactly once across crashes.',
    '    path: /var/log/mls/{model_id}/%Y-%m-%d.ndjson',
    '    rotate: { max_bytes: 100MiB }',
  ],
  otlp: [
    '  - name: otel',
    '    type: otlp',
    '    # An OpenTelemetry Collector (or Loki, Honeycomb, Datadog, Elastic) over OTLP/HTTP.',
    '    endpoint: http://localhost:4318',
    '    protocol: http/protobuf',
  ],
  webhook: [
    '  - name: hook',
    '    type: webhook',
    '    # Batches POSTed as NDJSON, each with a stable Idempotency-Key; change the URL.',
    '    url: https://hooks.example.com/logs',
    '    # signing_secret: ${MLS_WEBHOOK_SECRET}   # adds X-MLS-Signature (HMAC-SHA256)',
  ],
  stdout: ['  - name: console', '    type: stdout', '    # NDJSON on stdout, for a container log collector; the daemon logs to stderr.'],
} as const;

/** The sink types `mls init` writes. */
export type StarterSink = keyof typeof SINKS;

/** A model id as a YAML scalar: plain when YAML reads it back as the same text, else double-quoted. */
function scalar(id: string): string {
  return /^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(id) && !/^(true|false|null|yes|no|on|off|~|[\d.]+)$/i.test(id) ? id : JSON.stringify(id);
}

/** The starter config for `models` and one sink of type `sink`. */
export function starterConfig(o: { models: readonly string[]; sink: StarterSink; apiUrl?: string | undefined }): string {
  return [
    '# A starter config of mls, written by `mls init`. Every key, its default and its meaning:',
    '# docs/configuration.md. Check it with `mls validate --config FILE` (add --no-env where',
    '# MLS_API_TOKEN is not set, --check-service to ask the service about each model), then',
    '# run it with `mls run --config FILE`.',
    'api:',
    `  base_url: ${o.apiUrl ?? 'https://api.example.com'}${o.apiUrl ? '' : '   # the model-management service: change this'}`,
    '  # The workspace API token, from the environment; or token_file: /path/to/token.',
    '  token: ${MLS_API_TOKEN}',
    'state:',
    '  # Checkpoints, the journal of entries not yet delivered, sink cursors. Keep it on',
    '  # persistent storage, one daemon per file.',
    '  path: /var/lib/mls/state.db',
    'poll:',
    '  start_at: -1h   # where a model without a checkpoint starts: now, -<duration> or a time',
    '# The models whose logs are shipped, by model_id (more in a file: models_file).',
    'models:',
    ...o.models.map((m) => `  - id: ${scalar(m)}`),
    'sinks:',
    ...SINKS[o.sink],
    '# /metrics, /healthz, /readyz and /status, on loopback.',
    'admin:',
    '  listen: 127.0.0.1:9464',
    '',
  ].join('\n');
}

interface InitOptions {
  models: string;
  sink: string;
  output?: string;
  apiUrl?: string;
  force?: boolean;
}

/** Adds `mls init`. */
export function register(program: Command, io: CommandIo = processIo()): void {
  program
    .command('init')
    .description('write a commented starter config for some models and one sink')
    .requiredOption('--models <ids>', 'model ids, separated by commas')
    .requiredOption('--sink <type>', `where the logs go: ${Object.keys(SINKS).join(', ')}`)
    .option('--api-url <url>', 'base URL of the service (default: a placeholder to change)')
    .option('-o, --output <path>', 'write the config to this file (default: print it)')
    .option('--force', 'overwrite the --output file if it exists')
    .action(runCommand(io, (opts: InitOptions) => runInit(opts, io)));
}

async function runInit(opts: InitOptions, io: CommandIo): Promise<void> {
  if (!Object.hasOwn(SINKS, opts.sink)) throw new UsageError(`--sink: expected one of ${Object.keys(SINKS).join(', ')}, got ${JSON.stringify(opts.sink)}`);
  const models = opts.models.split(',').map((m) => m.trim());
  if (models.some((m) => m === '')) throw new UsageError(`--models: expected model ids separated by commas, got ${JSON.stringify(opts.models)}`);
  if (new Set(models).size !== models.length) throw new UsageError('--models: a model id is listed twice; list each once');
  if (opts.apiUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(opts.apiUrl)) throw new UsageError(`--api-url: expected an http:// or https:// URL, got ${JSON.stringify(opts.apiUrl)}`);
  const text = starterConfig({ models, sink: opts.sink as StarterSink, apiUrl: opts.apiUrl });
  if (opts.output === undefined) return writeOutput(io.stdout, text);
  await writeFile(opts.output, text, { flag: opts.force ? 'w' : 'wx' }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'EEXIST') throw new UsageError(`--output: ${opts.output} exists already; choose another path, or add --force to overwrite it`);
    throw new UsageError(`--output: cannot write ${opts.output} (${err.code ?? String(err)})`, { cause: err });
  });
  io.stderr.write(`mls: wrote ${opts.output}; next: mls validate --config ${opts.output}\n`);
}
