//! Turns a fetched page into what the journal commits: each entry's exact time and content
//! hash, and a way to render the NDJSON lines of the entries that turn out to be new. The
//! page computes them from what its reader made of the body (api/page/), in one call per
//! page. An entry without a time of its own (its time did not parse, or it is not an
//! object) is kept with its time's text: its journal time is the window's start, and its
//! dedupe key its text alone, whichever window returns it (dedupe/buckets.ts).
import type { ParsedPage } from '../api/types.js';
import { untimed } from '../records/off-spec.js';
import { legacyContentHash, untimedHash } from '../dedupe/key.js';
import type { PreparedPage } from '../journal/prepared.js';
import { msToNs } from '../time/timestamp.js';

const NO_TIMES = new BigInt64Array(0);
const NO_HASHES = new Float64Array(0);

/** Prepares a page of a window that starts at `windowFromMs`. */
export function preparePage(page: ParsedPage, windowFromMs: number): PreparedPage {
  const n = page.count;
  // Most polls of a quiet model: nothing to key (zero-length arrays cannot be written to).
  if (n === 0) return new PreparedParsedPage(page, NO_TIMES, NO_HASHES, undefined);
  const timesNs = new BigInt64Array(n);
  const hashes = new Float64Array(n);
  const invalid = page.keys(timesNs, hashes);
  if (invalid) {
    for (let i = 0; i < n; i++) {
      if (!untimed(invalid[i]!)) continue;
      timesNs[i] = msToNs(windowFromMs);
      hashes[i] = untimedHash(page.text(i, 'time'), page.text(i, 'stream'), page.text(i, 'log'));
    }
  }
  return new PreparedParsedPage(page, timesNs, hashes, invalid);
}

class PreparedParsedPage implements PreparedPage {
  constructor(
    private readonly parsed: ParsedPage,
    readonly timesNs: BigInt64Array,
    readonly hashes: Float64Array,
    readonly invalid: Uint8Array | undefined,
  ) {}

  get length(): number {
    return this.parsed.count;
  }

  legacyHash(i: number): number {
    return legacyContentHash(this.parsed.text(i, 'stream'), this.parsed.text(i, 'log'));
  }

  render(modelId: string, kept: Uint32Array, n: number): Buffer {
    return this.parsed.render(modelId, kept, n);
  }
}
