//! The daemon's own logs: pino JSON on stderr, or for a person one readable line each
//! (pino-pretty), with every registered secret scrubbed from every string before it is
//! written, and no key written twice on a line.
import { createRequire } from 'node:module';
import { isatty } from 'node:tty';
import { pino, type DestinationStream, type Logger } from 'pino';
import { scrubSecrets } from './secrets.js';
import { dedupeChildBindings, writeWithoutRepeats } from './log-keys.js';

const REDACTED = '[REDACTED]';

function scrubDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrubSecrets(value);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    return { type: value.name, message: scrubSecrets(value.message), code: (value as { code?: unknown }).code, stack: value.stack ? scrubSecrets(value.stack) : undefined };
  }
  if (Array.isArray(value)) return value.map((v) => scrubDeep(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = /^(authorization|token|api[_-]?key|secret|signing_secret|password)$/i.test(k) ? REDACTED : scrubDeep(v, depth + 1);
  }
  return out;
}

/** How log lines are written: JSON, a readable line, or readable on a terminal and JSON otherwise. */
export type LogFormat = 'json' | 'pretty' | 'auto';

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  level?: string;
  /** Default `auto`. */
  format?: LogFormat;
  /** Where to write (a terminal when its `isTTY` is true); default stderr (stdout may carry data for the stdout sink). */
  destination?: DestinationStream | number;
}

/** Creates the root logger. Components take `logger.child({ component })`. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const dest = options.destination ?? 2;
  const out: DestinationStream = typeof dest === 'number' ? pino.destination({ fd: dest, sync: true }) : dest;
  const terminal = typeof dest === 'number' ? isatty(dest) : (dest as { isTTY?: boolean }).isTTY === true;
  const pretty = options.format === 'pretty' || (options.format !== 'json' && terminal);
  return pino(
    {
      level: options.level ?? process.env.MLS_LOG_LEVEL ?? 'info',
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (obj) => scrubDeep(obj) as Record<string, unknown>,
      },
      onChild: dedupeChildBindings,
      hooks: {
        logMethod(args, method) {
          const scrubbed: unknown[] = args.map((a) => (typeof a === 'string' ? scrubSecrets(a) : a));
          // pino would take the message of an Error logged without one after this hook, unscrubbed
          const first = scrubbed[0] as { err?: unknown; msg?: unknown } | null | undefined;
          const err = first instanceof Error ? first : first?.msg === undefined ? first?.err : undefined;
          if (err instanceof Error && scrubbed[1] === undefined) scrubbed[1] = scrubSecrets(err.message);
          writeWithoutRepeats(this, scrubbed, method as (...a: unknown[]) => void);
        },
      },
    },
    pretty ? prettyLines(out, terminal && process.env.NO_COLOR === undefined) : out,
  );
}

/**
 * Each JSON line made readable as pino writes it, in this thread and at once: no line can be
 * lost at exit, as one still queued for a transport's worker thread could be. Loaded only
 * when asked for: a JSON log does without it.
 */
function prettyLines(out: DestinationStream, colorize: boolean): DestinationStream {
  const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  const format = prettyFactory({ colorize, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
  return { write: (line: string) => out.write(format(line)) };
}

export type { Logger };
