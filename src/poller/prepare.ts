//! Turns a fetched page into what the journal commits: each entry's exact time and content
//! hash, and a way to render the NDJSON lines of the entries that turn out to be new. The
//! page computes them from what its reader made of the body (api/page/), in one call per
//! page; here an entry whose time does not parse is kept, keyed under the window start.
import type { ParsedPage } from '../api/types.js';
import { CONTENT_HASH, LEGACY_CONTENT_HASH } from '../dedupe/key.js';
import type { PreparedPage } from '../journal/prepared.js';

/** A prepared page, and the entries whose time could not be parsed. */
export interface Prepared {
  page: PreparedPage;
  /** Entries kept with their original time text, keyed under the window start. */
  badTimes: number;
  /** The first such time, for the warning. */
  badExample: string | undefined;
}

const WINDOW_NS = 1_000_000n;
const NO_TIMES = new BigInt64Array(0);
const NO_HASHES = new Float64Array(0);

/** Prepares a page of a window that starts at `windowFromMs`. */
export function preparePage(page: ParsedPage, windowFromMs: number): Prepared {
  const n = page.count;
  // Most polls of a quiet model: nothing to key (zero-length arrays cannot be written to).
  if (n === 0) return { page: new PreparedParsedPage(page, NO_TIMES, NO_HASHES, undefined), badTimes: 0, badExample: undefined };
  const timesNs = new BigInt64Array(n);
  const hashes = new Float64Array(n);
  const badTime = page.keys(timesNs, hashes);
  let badTimes = 0;
  let badExample: string | undefined;
  if (badTime) {
    for (let i = 0; i < n; i++) {
      if (!badTime[i]) continue;
      // Kept and delivered with its original text; keyed under the window start so it is deduped and pruned.
      const time = page.text(i, 'time');
      badTimes++;
      badExample ??= time;
      timesNs[i] = BigInt(windowFromMs) * WINDOW_NS;
      hashes[i] = page.hash(CONTENT_HASH, i, time);
    }
  }
  return { page: new PreparedParsedPage(page, timesNs, hashes, badTime), badTimes, badExample };
}

class PreparedParsedPage implements PreparedPage {
  /** `badTime` marks the entries whose time did not parse: their key holds the time's text too, under either hash. */
  constructor(
    private readonly parsed: ParsedPage,
    readonly timesNs: BigInt64Array,
    readonly hashes: Float64Array,
    private readonly badTime: Uint8Array | undefined,
  ) {}

  get length(): number {
    return this.parsed.count;
  }

  legacyHash(i: number): number {
    return this.parsed.hash(LEGACY_CONTENT_HASH, i, this.badTime?.[i] ? this.parsed.text(i, 'time') : undefined);
  }

  render(modelId: string, kept: Uint32Array, n: number): Buffer {
    return this.parsed.render(modelId, kept, n);
  }
}
