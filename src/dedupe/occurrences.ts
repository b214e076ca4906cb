//! Occurrence-counted dedupe. For each key the store keeps `delivered`, the most copies
//! any single fetch of a window has shown; during a fetch it keeps `seen`, the running
//! count of the key in that fetch. An entry is new exactly when `seen` exceeds
//! `delivered`, so genuine identical twins are each delivered once and re-reading an
//! overlapping window delivers nothing twice.

/** Stored counts of one key. */
export interface KeyCounts {
  delivered: number;
  seen: number;
  /** The fetch that `seen` belongs to; a count from another fetch starts again at 0. */
  fetchId: number;
}

/**
 * Decides one entry of fetch `fetchId` against its key's stored counts, updating them in
 * place (no allocation per entry): returns whether to deliver it. A key not stored yet is
 * `{ delivered: 0, seen: 0, fetchId }`.
 */
export function countInPlace(key: KeyCounts, fetchId: number): boolean {
  key.seen = key.fetchId === fetchId ? key.seen + 1 : 1;
  key.fetchId = fetchId;
  if (key.seen <= key.delivered) return false;
  key.delivered = key.seen;
  return true;
}
