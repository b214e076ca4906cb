//! How the file sink meets I/O errors: the wait before retrying depends on the error (a
//! full disk or a permission takes a person longer than a passing failure), and each kind
//! of error is logged at error level at most once a minute.
import { stat } from 'node:fs/promises';
import { describeError, fileErrorFix } from '../../errors.js';
import { errorCode } from '../../net/transport-errors.js';
import type { SinkLogger } from '../contract.js';

const ERROR_LOG_INTERVAL_MS = 60_000;

/** How long to wait before retrying a batch that failed with `err`. */
export function retryDelayMs(err: unknown): number {
  switch (errorCode(err)) {
    case 'ENOSPC':
    case 'EDQUOT':
    case 'EFBIG':
      return 10_000;
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return 30_000;
    default:
      return 5_000;
  }
}

/** The size of the file at `path`, or undefined when there is none. */
export async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return undefined;
    throw err;
  }
}

/** `err` in words, followed by what a person should change when one must (naming `setting`). */
export function describeWithFix(err: unknown, setting: string): string {
  const fix = fileErrorFix(err, setting);
  return `${describeError(err)}${fix ? `; ${fix}` : ''}`;
}

/** Logs I/O errors of one sink with the fix for each, at error level once a minute per kind, else at debug. */
export class IoErrorLog {
  readonly #loggedAt = new Map<string, number>();
  readonly #logger: SinkLogger;
  readonly #sink: string;

  constructor(logger: SinkLogger, sink: string) {
    this.#logger = logger;
    this.#sink = sink;
  }

  /** How errors name the setting to change. */
  get setting(): string {
    return `the path of sink ${this.#sink}`;
  }

  log(err: unknown, msg: string): void {
    const code = errorCode(err);
    const now = performance.now();
    const due = now - (this.#loggedAt.get(code) ?? -Infinity) >= ERROR_LOG_INTERVAL_MS;
    if (due) this.#loggedAt.set(code, now);
    const level = due ? 'error' : 'debug';
    this.#logger[level]({ sink: this.#sink, code, err: describeError(err), fix: fileErrorFix(err, this.setting) }, msg);
  }
}
