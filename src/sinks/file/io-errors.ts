//! How the file sink meets I/O errors: the wait before retrying depends on the error (a
//! full disk or a permission takes a person longer than a passing failure), and each kind
//! of error is logged at error level at most once a minute.
import { stat } from 'node:fs/promises';
import { describeError, fileErrorFix } from '../../errors.js';
import type { SinkLogger } from '../contract.js';

const ERROR_LOG_INTERVAL_MS = 60_000;

/** The `code` of a Node.js system error (`ENOSPC`, …), if any. */
export function errCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** How long to wait before retrying a batch that failed with `code`. */
export function retryDelayMs(code: string | undefined): number {
  switch (code) {
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
    if (errCode(err) === 'ENOENT') return undefined;
    throw err;
  }
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
    const key = errCode(err) ?? 'other';
    const now = performance.now();
    const last = this.#loggedAt.get(key);
    const payload = { sink: this.#sink, code: errCode(err), err: describeError(err), fix: fileErrorFix(err, this.setting) };
    if (last === undefined || now - last >= ERROR_LOG_INTERVAL_MS) {
      this.#loggedAt.set(key, now);
      this.#logger.error(payload, msg);
    } else {
      this.#logger.debug(payload, msg);
    }
  }
}
