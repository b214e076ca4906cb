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
  const timesNs = n === 0 ? NO_TIMES : new BigInt64Array(n);
  const hashes = n === 0 ? NO_HASHES : new Float64Array(n);
  const invalid = n === 0 ? undefined : page.keys(timesNs, hashes);
  if (invalid) {
    for (let i = 0; i < n; i++) {
      if (!untimed(invalid[i]!)) continue;
      timesNs[i] = msToNs(windowFromMs);
      hashes[i] = untimedHash(page.text(i, 'time'), page.text(i, 'stream'), page.text(i, 'log'));
    }
  }
  return {
    length: n,
    timesNs,
    hashes,
    invalid,
    legacyHash: (i) => legacyContentHash(page.text(i, 'stream'), page.text(i, 'log')),
    render: (modelId, kept, count) => page.render(modelId, kept, count),
  };
}
