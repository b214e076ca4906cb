//! What the commands that talk to the service share: the connection options (`--api-url`,
//! `--token-file`, `--auth-scheme`, `--timeout`), turning them into client options, the
//! streams a command writes to, and the wrapper that turns a failure into a message and
//! an exit code.
import { once } from 'node:events';
import { Option, type Command } from 'commander';
import type { ApiClientOptions } from '../api/client-options.js';
import { describeError, ExitCode, MlsError, UsageError } from '../errors.js';
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

/** The connection options as commander parses them. */
export interface ApiCliOptions {
  apiUrl?: string;
  tokenFile?: string;
  authScheme?: string;
  timeout?: string;
  /** Only present to be refused. */
  token?: unknown;
}

/** Default of `--timeout`: the time one request may take, retries included. */
export const DEFAULT_TIMEOUT = '30s';

/** Adds the connection options to a command. */
export function addApiOptions(cmd: Command): Command {
  return cmd
    .option('--api-url <url>', 'base URL of the service (default: $MLS_API_URL)')
    .option('--token-file <path>', 'file holding the API token (default: the token in $MLS_API_TOKEN)')
    .option('--auth-scheme <scheme>', 'how the token is sent: raw (the whole header value) or bearer', 'raw')
    .option('--timeout <duration>', 'time a request may take, retries included', DEFAULT_TIMEOUT)
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
 * Turns the connection options and the environment into client options. The token
 * comes from `--token-file`, else from `MLS_API_TOKEN`, and is registered so that no log
 * line can show it.
 * @throws UsageError naming the option at fault.
 */
export async function resolveApiOptions(opts: ApiCliOptions, env: NodeJS.ProcessEnv): Promise<ApiClientOptions> {
  refuseTokenFlag(opts);
  const baseUrl = opts.apiUrl ?? env.MLS_API_URL;
  if (baseUrl === undefined || baseUrl.trim() === '') {
    throw new UsageError('no service URL: pass --api-url or set MLS_API_URL');
  }
  let url: URL;
  try {
    url = new URL(baseUrl.trim());
  } catch {
    throw new UsageError(`--api-url: not a valid URL: ${JSON.stringify(baseUrl)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--api-url: expected an http:// or https:// URL, got ${url.protocol}`);
  }
  if (url.username || url.password) throw new UsageError('--api-url: must not carry credentials; give the token through MLS_API_TOKEN or --token-file');

  const scheme = opts.authScheme ?? 'raw';
  if (scheme !== 'raw' && scheme !== 'bearer') {
    throw new UsageError(`--auth-scheme: expected raw or bearer, got ${JSON.stringify(scheme)}`);
  }
  const timeoutText = opts.timeout ?? DEFAULT_TIMEOUT;
  const timeoutMs = parseDuration(timeoutText);
  if (timeoutMs === undefined || timeoutMs <= 0) {
    throw new UsageError(`--timeout: expected a positive duration such as 30s or 2m, got ${JSON.stringify(timeoutText)}`);
  }

  let token: string;
  if (opts.tokenFile !== undefined) {
    const read = (await import('../config/token.js')).readTokenFile(opts.tokenFile);
    if (read.problem !== undefined) throw new UsageError(`--token-file: ${read.problem}`);
    token = read.token!.trim();
  } else {
    token = (env.MLS_API_TOKEN ?? '').trim();
    if (token === '') throw new UsageError('no API token: set MLS_API_TOKEN or pass --token-file');
  }
  if (/[\r\n\0]/.test(token)) throw new UsageError('the API token contains a line break or NUL; it must be a single line');
  registerSecret(token);

  return {
    baseUrl: url.toString(),
    token,
    authScheme: scheme,
    timeouts: { connectMs: Math.min(10_000, timeoutMs), headersMs: timeoutMs, bodyMs: timeoutMs },
    retry: { deadlineMs: timeoutMs, baseDelayMs: 250, maxDelayMs: 5_000 },
  };
}

/**
 * Wraps a command action: an `MlsError` becomes `mls: <message>` on stderr and its exit
 * code; anything else is reported as unexpected, with exit code 1.
 */
export function runCommand<A extends unknown[]>(io: CommandIo, fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      if (err instanceof MlsError) {
        io.stderr.write(`mls: ${scrubSecrets(describeError(err))}\n`);
        io.setExitCode(err.exitCode);
      } else {
        io.stderr.write(`mls: unexpected error: ${scrubSecrets(describeError(err))}\n`);
        io.setExitCode(ExitCode.failure);
      }
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
    if (this.failure !== undefined) throw new OutputClosedError(this.failure);
    if (text === '') return;
    if (!this.stream.write(text)) {
      try {
        await once(this.stream, 'drain');
      } catch (err) {
        throw new OutputClosedError(err);
      }
    }
    if (this.failure !== undefined) throw new OutputClosedError(this.failure);
  }

  /** Stops listening to the stream. */
  release(): void {
    this.stream.off('error', this.onError);
  }
}
