//! The daemon's own logs: pino JSON on stderr, with every registered secret scrubbed
//! from every string before it is written, and no key written twice on a line.
import { pino, type Logger } from 'pino';
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

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  level?: string;
  /** Where to write; default stderr (stdout may carry data for the stdout sink). */
  destination?: NodeJS.WritableStream | number;
}

/** Creates the root logger. Components take `logger.child({ component })`. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const dest = options.destination ?? 2;
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
    typeof dest === 'number' ? pino.destination({ fd: dest, sync: true }) : dest,
  );
}

export type { Logger };
