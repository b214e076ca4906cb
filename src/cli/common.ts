//! What the commands that talk to the service share: the connection options (`--api-url`,
//! `--token-file`, `--auth-scheme`, `--timeout`), turning them into client options, the
//! streams a command writes to, and the wrapper that turns a failure into a message and
//! an exit code.
import { once } from 'node:events';
import { CommanderError, Option, type Command } from 'commander';
import type { ApiClientOptions } from '../api/client-options.js';
import type { Config } from '../config/index.js';
import { ConfigError, describeError, ExitCode, MlsError, UsageError } from '../errors.js';
import { registerSecret, scrubSecrets } from '../telemetry/secrets.js';
import { parseDuration } from '../time/duration.js';

/** Where a command reads its environment and writes its output; tests pass their own. */
export interface CommandIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /** Records the exit code of the command. Default: sets `process.exitCode`. */
  setExitCode(code: number): void;
  /**
   * Stops long-running commands (`--follow`) cleanly. When absent, such a command stops
   * on SIGINT or SIGTERM.
   */
  signal?: AbortSignal;
}

/** The real process: stdout, stderr, environment, `process.exitCode`. */
export function processIo(): CommandIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    setExitCode: (code) => {
      process.exitCode = code;
    },
  };
}

/**
 * What stops a long-running command: `io.signal`, else SIGINT or SIGTERM. Call `release`
 * when the command ends (it lets go of the signal handlers).
 */
export function interruption(io: CommandIo): { signal: AbortSignal; release(): void } {
  if (io.signal !== undefined) return { signal: io.signal, release: () => {} };
  const controller = new AbortController();
  const stop = (): void => controller.abort(new Error('interrupted'));
  const signals = ['SIGINT', 'SIGTERM'] as const;
  for (const s of signals) process.once(s, stop);
  return { signal: controller.signal, release: () => signals.forEach((s) => process.off(s, stop)) };
}

/** The connection options as commander parses them. */
export interface ApiCliOptions {
  /** The config file whose `api` section gives the defaults of the others. */
  config?: string;
  apiUrl?: string;
  tokenFile?: string;
  authScheme?: string;
  timeout?: string;
  /** Only present to be refused. */
  token?: unknown;
}

/** Default of `--timeout` without a config: the time one request may take, retries included. */
export const DEFAULT_TIMEOUT = '30s';

/**
 * `-c, --config <file>`, else `$MLS_CONFIG`: the one way every command names its config.
 * Mandatory unless `optional` (the commands that can do without one).
 */
export function configOption(optional = false): Option {
  const option = new Option('-c, --config <file>', optional ? 'configuration file (YAML) to take the service and token from (and, for logs --process, the processing rules)' : 'configuration file (YAML)').env('MLS_CONFIG');
  return optional ? option : option.makeOptionMandatory();
}

/** Adds the connection options to a command, `--config` among them. */
export function addApiOptions(cmd: Command): Command {
  return cmd
    .addOption(configOption(true))
    .option('--api-url <url>', "base URL of the service (default: the config's api.base_url, else $MLS_API_URL)")
    .option('--token-file <path>', "file holding the API token (default: the config's token, else $MLS_API_TOKEN)")
    .option('--auth-scheme <scheme>', "how the token is sent: raw (the whole header value) or bearer (default: the config's, else raw)")
    .option('--timeout <duration>', `time a request may take, retries included (default: the config's api timeouts and retry, else ${DEFAULT_TIMEOUT})`)
    .addOption(new Option('--token <token>', 'refused: use $MLS_API_TOKEN or --token-file').hideHelp());
}

/**
 * Refuses `--token`: a token on the command line is visible to every user through `ps`.
 * @throws UsageError when the flag was given.
 */
export function refuseTokenFlag(opts: ApiCliOptions): void {
  if (opts.token !== undefined) {
    throw new UsageError('--token is not accepted: a token on the command line shows in `ps`; use MLS_API_TOKEN or --token-file');
  }
}

/**
 * Turns the connection options and the environment into client options. Each option given
 * wins over the client options of the config (`base`, when `--config` named one), which win
 * over the environment (`MLS_API_URL`, `MLS_API_TOKEN`). The token is registered so that no
 * log line can show it.
 * @throws UsageError naming the option at fault.
 */
export async function resolveApiOptions(opts: ApiCliOptions, env: NodeJS.ProcessEnv, base?: ApiClientOptions): Promise<ApiClientOptions> {
  refuseTokenFlag(opts);
  const baseUrl = opts.apiUrl ?? base?.baseUrl ?? env.MLS_API_URL;
  if (baseUrl === undefined || baseUrl.trim() === '') {
    throw new UsageError('no service URL: pass --api-url or set MLS_API_URL (or name a config with --config)');
  }
  const url = URL.parse(baseUrl.trim());
  if (!url) throw new UsageError(`--api-url: not a valid URL: ${JSON.stringify(baseUrl)}`);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--api-url: expected an http:// or https:// URL, got ${url.protocol}`);
  }
  if (url.username || url.password) throw new UsageError('--api-url: must not carry credentials; give the token through MLS_API_TOKEN or --token-file');

  const scheme = opts.authScheme ?? base?.authScheme ?? 'raw';
  if (scheme !== 'raw' && scheme !== 'bearer') {
    throw new UsageError(`--auth-scheme: expected raw or bearer, got ${JSON.stringify(scheme)}`);
  }
  const timeoutText = opts.timeout ?? (base ? undefined : DEFAULT_TIMEOUT);
  const timeoutMs = timeoutText === undefined ? undefined : parseDuration(timeoutText);
  if (timeoutText !== undefined && (timeoutMs === undefined || timeoutMs <= 0)) {
    throw new UsageError(`--timeout: expected a positive duration such as 30s or 2m, got ${JSON.stringify(timeoutText)}`);
  }

  let token: string;
  if (opts.tokenFile !== undefined) {
    const read = (await import('../config/token.js')).readTokenFile(opts.tokenFile);
    if (read.problem !== undefined) throw new UsageError(`--token-file: ${read.problem}`);
    token = read.token!.trim();
  } else {
    token = (base?.token ?? env.MLS_API_TOKEN ?? '').trim();
    if (token === '') throw new UsageError('no API token: set MLS_API_TOKEN or pass --token-file (or name a config with --config)');
  }
  if (/[\r\n\0]/.test(token)) throw new UsageError('the API token contains a line break or NUL; it must be a single line');
  registerSecret(token);

  return {
    ...base,
    baseUrl: url.toString(),
    token,
    authScheme: scheme,
    ...(timeoutMs === undefined
      ? {}
      : {
          timeouts: { connectMs: Math.min(10_000, timeoutMs), headersMs: timeoutMs, bodyMs: timeoutMs },
          retry: { deadlineMs: timeoutMs, baseDelayMs: 250, maxDelayMs: 5_000 },
        }),
  };
}

/**
 * The client options of a command that talks to the service, and the config `--config`
 * named (undefined without one: the options then come from the flags and the environment).
 */
export async function resolveConnection(opts: ApiCliOptions, env: NodeJS.ProcessEnv): Promise<{ api: ApiClientOptions; config: Config | undefined }> {
  refuseTokenFlag(opts);
  if (opts.config === undefined) return { api: await resolveApiOptions(opts, env), config: undefined };
  const { configClientOptions, loadConfig } = await import('./config.js');
  const config = await loadConfig(opts.config, env);
  return { api: await resolveApiOptions(opts, env, await configClientOptions(config)), config };
}

/**
 * Prints an error the way every command does and returns the exit code: an `MlsError` as
 * `mls: <message>` (a config's problems each on a line) with its exit code; anything else as
 * unexpected, with exit code 1 (and its stack, with `stack`). Commander printed its own.
 */
export function reportError(err: unknown, stderr: NodeJS.WritableStream, options: { stack?: boolean } = {}): number {
  if (err instanceof CommanderError) {
    return ['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(err.code) ? ExitCode.ok : ExitCode.usage;
  }
  if (err instanceof ConfigError) {
    stderr.write(`mls: ${scrubSecrets(err.message)}\n`);
    // the message often lists the problems already
    for (const p of err.problems) if (!err.message.includes(p)) stderr.write(`  ${scrubSecrets(p)}\n`);
  } else if (err instanceof MlsError) {
    stderr.write(`mls: ${scrubSecrets(describeError(err))}\n`);
  } else {
    const what = options.stack && err instanceof Error ? (err.stack ?? err.message) : describeError(err);
    stderr.write(`mls: unexpected error: ${scrubSecrets(what)}\n`);
    return ExitCode.failure;
  }
  return err.exitCode;
}

/** Wraps a command action: a failure is printed by {@link reportError}, and sets the exit code. */
export function runCommand<A extends unknown[]>(io: CommandIo, fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      io.setExitCode(reportError(err, io.stderr));
    }
  };
}

/** Raised by {@link OutputWriter} when the reader of the output went away (`| head`). */
export class OutputClosedError extends Error {
  constructor(cause: unknown) {
    super('the output was closed', { cause });
  }
}

/** Writes text to a stream, waiting for `drain` whenever the stream asks to. */
export class OutputWriter {
  private failure: unknown;
  constructor(private readonly stream: NodeJS.WritableStream) {
    stream.on('error', this.onError);
  }

  private readonly onError = (err: unknown): void => {
    this.failure ??= err;
  };

  /** Writes `text`; resolves once the stream can take more. */
  async write(text: string): Promise<void> {
    if (text !== '' && this.failure === undefined && !this.stream.write(text)) {
      await once(this.stream, 'drain').catch((err: unknown) => (this.failure ??= err));
    }
    if (this.failure !== undefined) throw new OutputClosedError(this.failure);
  }

  /** Stops listening to the stream. */
  release(): void {
    this.stream.off('error', this.onError);
  }
}

/** Writes `text` to `stream` as {@link OutputWriter.write} does, for a command that prints once. */
export async function writeOutput(stream: NodeJS.WritableStream, text: string): Promise<void> {
  const out = new OutputWriter(stream);
  try {
    await out.write(text);
  } finally {
    out.release();
  }
}

/** Rows of text in aligned columns under a heading, two spaces apart, for a person. */
export function textTable(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(head), ...rows.map(line)].join('\n') + '\n';
}
