//! Human durations (`500ms`, `10s`, `5m`, `1h`, `7d`) as used in the config and on the command line.

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART_RE = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;

/**
 * Parses a duration such as `10s`, `1.5h` or `250ms` into milliseconds.
 * Compound forms (`1h30m`) are accepted too. Returns `undefined` for anything else,
 * so callers can report the value with its config path.
 */
export function parseDuration(text: string): number | undefined {
  const s = text.trim();
  const parts = [...s.matchAll(PART_RE)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== s) return undefined;
  return parts.reduce((total, [, n, unit]) => total + Math.round(Number(n) * UNIT_MS[unit!]!), 0);
}

/** Formats milliseconds compactly for people: `1h5m`, `30s`, `250ms`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(Math.round(ms));
  if (rest < 1000) return `${sign}${rest}ms`;
  const out: string[] = [];
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1_000]] as const) {
    if (rest >= size) {
      out.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return sign + out.join('');
}
