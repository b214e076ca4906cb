//! Bounds of one window fetch against a service that misbehaves. Every next_token followed
//! in the window is remembered (as a hash, stored with the checkpoint, so the memory
//! survives a crash): a page whose next_token was already followed closes a cycle, and that
//! page is the window's last one. A fetch also has a page cap and a time cap; a window that
//! reaches one, or whose page is over the response size limit, is cut to a shorter window
//! and fetched again from its start.
import { createHash } from 'node:crypto';

/** The caps of one window fetch (`poll.window_limits`). */
export interface WindowLimits {
  /** Most pages read in one fetch of a window. */
  maxPages: number;
  /** Longest time one fetch may take, pauses for a full journal excluded (ms). */
  maxDurationMs: number;
}

/** Why a window fetch was cut short: a cap, or a page over `api.max_response_bytes`. */
export type SplitReason = 'max_pages' | 'max_duration' | 'too_large';

/** The shortest window a page or time cap cuts a window down to. */
export const MIN_CAPPED_SPAN_MS = 1_000;
/** The shortest window an oversized page cuts a window down to. */
export const MIN_OVERSIZED_SPAN_MS = 1;

/** The hash under which a followed token is stored (hex; the token itself is stored only as the next one). */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 16);
}

/** What to do with a page, given its next_token. */
export type PageVerdict =
  /** No next_token: the last page. */
  | { kind: 'end' }
  /** The token was followed before in this window: commit the page as the last one. */
  | { kind: 'cycle'; length: number }
  /** A cap is reached: do not follow the token. */
  | { kind: 'limit'; reason: 'max_pages' | 'max_duration' }
  /** Follow the token; store `hash` with it. */
  | { kind: 'follow'; hash: string };

const END: PageVerdict = Object.freeze({ kind: 'end' });

/** The tokens followed and the caps of one fetch of a window. */
export class WindowGuard {
  /** Hashes of the tokens followed, in order. */
  private readonly order: string[];
  /** The same as a set; made with the first page that has a next_token (most windows are one page). */
  private followed: Set<string> | undefined;
  private readonly startedMs: number;
  private excludedMs = 0;

  /**
   * @param stored hashes of the tokens already followed in this fetch (from the checkpoint)
   * @param now monotonic milliseconds
   */
  constructor(
    stored: readonly string[] | undefined,
    private readonly limits: WindowLimits,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.order = stored ? [...stored] : [];
    this.startedMs = now();
  }

  /** Pages requested in this fetch so far: the first one, and one per token followed. */
  get pagesRead(): number {
    return this.order.length + 1;
  }

  /** Time of this fetch that counts against `maxDurationMs`. */
  get elapsedMs(): number {
    return this.now() - this.startedMs - this.excludedMs;
  }

  /** Leaves `ms` out of the fetch's time (a pause while the journal was full). */
  exclude(ms: number): void {
    this.excludedMs += Math.max(0, ms);
  }

  /** Judges a page that arrived with `nextToken`; a token to follow is remembered at once. */
  check(nextToken: string | undefined): PageVerdict {
    if (nextToken === undefined) return END;
    const hash = tokenHash(nextToken);
    this.followed ??= new Set(this.order);
    if (this.followed.has(hash)) return { kind: 'cycle', length: this.order.length - this.order.lastIndexOf(hash) };
    if (this.pagesRead >= this.limits.maxPages) return { kind: 'limit', reason: 'max_pages' };
    if (this.elapsedMs >= this.limits.maxDurationMs) return { kind: 'limit', reason: 'max_duration' };
    this.order.push(hash);
    this.followed.add(hash);
    return { kind: 'follow', hash };
  }
}

/**
 * The window to fetch instead of `w`: its first half, at least `minSpanMs` long. Undefined
 * when `w` is already no longer than that.
 */
export function shortenedWindow(w: { fromMs: number; toMs: number }, minSpanMs: number): { fromMs: number; toMs: number } | undefined {
  const span = w.toMs - w.fromMs;
  if (span <= minSpanMs) return undefined;
  return { fromMs: w.fromMs, toMs: w.fromMs + Math.max(minSpanMs, Math.floor(span / 2)) };
}
