//! Parsers for the scalar notations of the config file (durations, sizes, rates, start
//! points, file modes, listen addresses). Each returns the parsed value or a `Fail`
//! carrying a message that says what is wrong and how to write it instead.
import { parseDuration } from '../time/duration.js';

/** A rejected value: `message` says what is wrong and how to fix it. */
export class Fail {
  constructor(readonly message: string) {}
}

/** A request budget: at most `count` requests per `perMs` milliseconds. */
export interface RateLimit {
  count: number;
  perMs: number;
}

import type { StartAt } from '../time/start-at.js';
export type { StartAt };

const DURATION_HINT = 'use e.g. 500ms, 10s, 5m, 1h, 1d';

/** Renders a user value for a problem message, shortened so a long (possibly secret) value never appears whole. */
export function show(value: unknown): string {
  if (value === null) return 'nothing (null)';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') {
    const short = value.length > 40 ? `${value.slice(0, 37)}...` : value;
    return JSON.stringify(short);
  }
  return String(value);
}

/** Parses a duration value of the config into milliseconds. */
export function parseDurationValue(value: unknown, options: { min?: number } = {}): number | Fail {
  if (typeof value === 'number') return new Fail(`${value} has no unit; ${DURATION_HINT}`);
  if (typeof value !== 'string') return new Fail(`expected a duration, got ${show(value)}; ${DURATION_HINT}`);
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return new Fail(`${show(value)} has no unit; ${DURATION_HINT}`);
  if (text.startsWith('-')) return new Fail(`${show(value)} is negative; durations are 0s or more`);
  const ms = parseDuration(text);
  if (ms === undefined) return new Fail(`${show(value)} is not a duration; ${DURATION_HINT}`);
  const min = options.min ?? 0;
  if (ms < min) return new Fail(min === 1 ? `${show(value)} must be longer than 0; ${DURATION_HINT}` : `${show(value)} is below the minimum of ${min}ms`);
  return ms;
}

const SIZE_HINT = 'use a whole number of bytes or e.g. 512KiB, 64MiB, 1GiB (units B KB MB GB KiB MiB GiB)';

/** Parses a size (integer bytes, or a number with a unit such as `64MiB`) into bytes. */
export function parseSizeValue(value: unknown, options: { min?: number } = {}): number | Fail {
  let bytes: number;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) return new Fail(`${show(value)} is not a whole number of bytes; ${SIZE_HINT}`);
    bytes = value;
  } else if (typeof value === 'string') {
    // KB, MB… count in thousands, KiB, MiB… in 1024s (any case)
    const m = /^(\d+(?:\.\d+)?)\s*(?:([kmgt])(i?)b|b)?$/i.exec(value.trim());
    if (!m) return new Fail(`${show(value)} is not a size; ${SIZE_HINT}`);
    const power = m[2] ? 'kmgt'.indexOf(m[2].toLowerCase()) + 1 : 0;
    bytes = Math.round(Number(m[1]) * (m[3] ? 1024 : 1000) ** power);
  } else {
    return new Fail(`expected a size, got ${show(value)}; ${SIZE_HINT}`);
  }
  if (bytes < 0) return new Fail(`${show(value)} is negative; sizes are 0 or more`);
  const min = options.min ?? 0;
  if (bytes < min) return new Fail(`${show(value)} must be at least ${min} byte${min === 1 ? '' : 's'}`);
  return bytes;
}

const RATE_UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000 };
const RATE_HINT = 'use N/s, N/m or N/h (e.g. 20/s), or 0 or "none" for no limit';

/** Parses a rate limit (`20/s`, `100/m`, `5000/h`, `10/30s`; `0` or `none` = unlimited → `null`). */
export function parseRateLimitValue(value: unknown): RateLimit | null | Fail {
  if (value === 0 || value === '0' || value === 'none') return null;
  if (typeof value !== 'string') return new Fail(`expected a rate such as 20/s, got ${show(value)}; ${RATE_HINT}`);
  const m = /^(\d+)\s*\/\s*(\S+)$/.exec(value.trim());
  if (!m) return new Fail(`${show(value)} is not a rate; ${RATE_HINT}`);
  const count = Number(m[1]);
  const per = m[2]!;
  const perMs = RATE_UNITS[per] ?? parseDuration(per);
  if (perMs === undefined || perMs <= 0) return new Fail(`${show(value)} has an unknown interval ${show(per)}; ${RATE_HINT}`);
  if (count <= 0) return new Fail(`${show(value)} allows no requests at all; ${RATE_HINT}`);
  return { count, perMs };
}

const ISO_RE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2}))?$/i;
const START_HINT = 'use now, a duration back from now such as -1h, or an ISO timestamp such as 2026-01-01T00:00:00Z';

/** Parses a start point: `now`, `-<duration>` or an ISO 8601 timestamp (with a zone, or a bare date meaning UTC midnight). */
export function parseStartAtValue(value: unknown): StartAt | Fail {
  if (typeof value !== 'string') return new Fail(`expected a start point, got ${show(value)}; ${START_HINT}`);
  const text = value.trim();
  if (text === 'now') return { kind: 'now' };
  if (text.startsWith('-')) {
    const ms = parseDuration(text.slice(1));
    if (ms === undefined) return new Fail(`${show(value)} is not a duration back from now; ${START_HINT}`);
    return { kind: 'relative', ms };
  }
  if (ISO_RE.test(text)) {
    const ms = Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text);
    if (Number.isFinite(ms)) return { kind: 'absolute', ms };
  }
  if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/i.test(text)) {
    return new Fail(`${show(value)} has no time zone; add Z for UTC (e.g. ${text}Z)`);
  }
  return new Fail(`${show(value)} is not a start point; ${START_HINT}`);
}

/** Parses a Unix permission mode written as an octal string (`"0600"`, `"640"`, `"0o600"`). */
export function parseFileModeValue(value: unknown): number | Fail {
  if (typeof value === 'number') {
    return new Fail(`${value} is a number; write the mode as a quoted octal string such as "0600" (YAML reads an unquoted 0600 as the decimal 600)`);
  }
  if (typeof value !== 'string') return new Fail(`expected an octal mode such as "0600", got ${show(value)}`);
  const m = /^(?:0o|0)?([0-7]{3,4})$/i.exec(value.trim());
  if (!m) return new Fail(`${show(value)} is not an octal mode; write e.g. "0600" or "0640"`);
  return Number.parseInt(m[1]!, 8);
}

/** A parsed `host:port` listen address. */
export interface ListenAddress {
  /** Host name or IP address (IPv6 without brackets); empty when none is given (the admin server then listens on loopback). */
  host: string;
  port: number;
}

/** Parses a listen address (`127.0.0.1:9464`, `[::1]:9464`, `:9464`, `localhost:0`). */
export function parseListen(value: string): ListenAddress | undefined {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]*)):(\d{1,5})$/.exec(value.trim());
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65_535) return undefined;
  return { host: m[1] ?? m[2] ?? '', port };
}
