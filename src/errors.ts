//! The project's error base class: every failure a user can meet has a stable `code`
//! and maps to a documented process exit code.

/** Process exit codes of the `mls` command. */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  auth: 3,
  service: 4,
  state: 5,
  config: 78,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * Base class of every error this project raises on purpose. `code` is stable
 * (`MLS_ERR_*`) and documented in the README; `exitCode` is what `mls` exits with
 * when this error ends a command.
 */
export class MlsError extends Error {
  readonly code: string;
  readonly exitCode: ExitCode;
  constructor(code: string, message: string, options: { cause?: unknown; exitCode?: ExitCode } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.exitCode = options.exitCode ?? ExitCode.failure;
  }
}

/** A command line that cannot be acted on (unknown flag, bad value). Exit 2. */
export class UsageError extends MlsError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('MLS_ERR_USAGE', message, { ...options, exitCode: ExitCode.usage });
  }
}

/** An invalid configuration. `problems` lists every problem, each naming its path. Exit 78. */
export class ConfigError extends MlsError {
  readonly problems: readonly string[];
  constructor(message: string, problems: readonly string[] = [], options: { cause?: unknown } = {}) {
    super('MLS_ERR_CONFIG', message, { ...options, exitCode: ExitCode.config });
    this.problems = Object.freeze([...problems]);
  }
}

/** The state file cannot be used (locked by another daemon, corrupt, unwritable). Exit 5. */
export class StateError extends MlsError {
  constructor(code: `MLS_ERR_STATE${string}`, message: string, options: { cause?: unknown } = {}) {
    super(code, message, { ...options, exitCode: ExitCode.state });
  }
}

/** Renders any thrown value as a one-line message, following `cause` chains. */
export function describeError(err: unknown): string {
  const parts: string[] = [];
  let cur: unknown = err;
  for (let depth = 0; cur !== undefined && cur !== null && depth < 5; depth++) {
    if (cur instanceof Error) {
      parts.push(cur.message);
      cur = (cur as { cause?: unknown }).cause;
    } else {
      parts.push(String(cur));
      break;
    }
  }
  return [...new Set(parts)].join(': ');
}
