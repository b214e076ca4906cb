//! What `mls logs --follow` has printed: each distinct line once per occurrence, across the
//! overlapping windows it reads again.
import { hash } from 'node:crypto';
import type { LogEntry } from '../records/entry.js';
import { parseEntryTime } from '../time/timestamp.js';

/** Logs longer than this are keyed by a hash, to keep the follow memory small. */
const KEY_TEXT_LIMIT = 128;

/**
 * Prints each distinct line once per occurrence: during one fetch of a window a line's
 * running count is compared with the most copies any fetch has shown, so a re-read prints
 * nothing new while two genuine identical lines both print.
 */
export class OccurrenceFilter {
  private readonly delivered = new Map<string, { count: number; ns: bigint }>();
  private readonly seen = new Map<string, number>();

  /** Starts a fetch of a window (or its restart): running counts start from zero. */
  beginFetch(): void {
    this.seen.clear();
  }

  /**
   * Whether `entry` is to be printed. An entry older than `minNs` (the window's start) is
   * not: the service may answer outside the window, and such a line may have been pruned
   * already. `fallbackNs` dates an entry whose time cannot be parsed, for pruning.
   */
  admit(entry: LogEntry, minNs: bigint, fallbackNs: bigint): boolean {
    const parsed = parseEntryTime(entry.time);
    if (parsed.ok && parsed.ns < minNs) return false;
    const timePart = parsed.ok ? parsed.canonical : `?${entry.time}`;
    const text = entry.log.length > KEY_TEXT_LIMIT ? `#${hash('sha256', entry.log)}` : `=${entry.log}`;
    const key = `${timePart}\u0000${entry.stream}\u0000${text}`;
    const seen = (this.seen.get(key) ?? 0) + 1;
    this.seen.set(key, seen);
    const record = this.delivered.get(key) ?? { count: 0, ns: parsed.ok ? parsed.ns : fallbackNs };
    this.delivered.set(key, record);
    if (seen <= record.count) return false;
    record.count = seen;
    return true;
  }

  /** Forgets lines older than `beforeNs`: no later fetch can return them again. */
  prune(beforeNs: bigint): void {
    for (const [key, record] of this.delivered) if (record.ns < beforeNs) this.delivered.delete(key);
  }

  /** Number of remembered lines. */
  get size(): number {
    return this.delivered.size;
  }
}
