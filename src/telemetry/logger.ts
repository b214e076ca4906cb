//! The daemon's own logs: pino JSON on stderr, with every registered secret scrubbed
//! from every string before it is written.
import { pino, type Logger } from 'pino';

const secrets = new Set<string>();
const REDACTED = '[REDACTED]';

/** Registers a value (token, signing secret, header value) that must never be logged. */
export function registerSecret(value: string | undefined): void {
  if (value && value.length >= 4) secrets.add(value);
}

/** Replaces every registered secret inside `text`. */
export function scrubSecrets(text: string): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
  return out;
}

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
      hooks: {
        logMethod(args, method) {
          const scrubbed = args.map((a) => (typeof a === 'string' ? scrubSecrets(a) : a));
          return method.apply(this, scrubbed as Parameters<typeof method>);
        },
      },
    },
    typeof dest === 'number' ? pino.destination({ fd: dest, sync: true }) : dest,
  );
}

export type { Logger };
