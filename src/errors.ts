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
  /** `mls settings plan --detailed-exitcode`: settings are waiting to be applied. */
  pending: 6,
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

/**
 * Renders any thrown value as a one-line message, following `cause` chains. A cause whose
 * message the text already holds (a message built as `what: ${describeError(cause)}`) is
 * not said again.
 */
export function describeError(err: unknown): string {
  let text = '';
  let cur: unknown = err;
  for (let depth = 0; cur !== undefined && cur !== null && depth < 5; depth++) {
    const part = cur instanceof Error ? cur.message : String(cur);
    if (!text.includes(part)) text = text === '' ? part : `${text}: ${part}`;
    if (!(cur instanceof Error)) break;
    cur = (cur as { cause?: unknown }).cause;
  }
  return text;
}

/**
 * What to change when a file operation on a path the config names under `setting` (e.g.
 * `state.path`) failed for a reason a person must fix: a read-only file system, missing
 * permissions, a full disk. Undefined for other failures.
 */
export function fileErrorFix(err: unknown, setting: string): string | undefined {
  switch ((err as { code?: unknown } | null)?.code) {
    case 'EROFS':
      return `set ${setting} to a path on a writable file system, such as a mounted volume`;
    case 'EACCES':
    case 'EPERM':
      return `give the daemon's user write access there, or set ${setting} to a directory it may write`;
    case 'ENOSPC':
    case 'EDQUOT':
    case 'SQLITE_FULL':
      return `free space on that disk, or set ${setting} to a path on another one`;
    default:
      return undefined;
  }
}

/**
 * Describes a failed file operation: `what` went wrong, the system's words (which name
 * the path; `path` is added when they do not), and the fix from {@link fileErrorFix}.
 */
export function describeFileError(what: string, path: string, err: unknown, setting: string): string {
  const namesPath = typeof (err as { path?: unknown } | null)?.path === 'string';
  const fix = fileErrorFix(err, setting);
  return `${what}${namesPath ? '' : ` ${path}`}: ${describeError(err)}${fix ? `; ${fix}` : ''}`;
}
