//! The reader of a *get model logs* body: the one place where a page's reader is chosen.
//! The scanner (scanner.ts) reads the usual page from its bytes, without an object per
//! entry; `JSON.parse` with the validation (json.ts) reads every body the scanner leaves:
//! a key given twice, an off-spec entry, and every malformed body, which it explains. Both
//! give the same entries, times, hashes and lines for any body the scanner reads
//! (property-tested); the scanner is kept for the throughput it gains end to end.
import type { ParsedPage } from '../types.js';
import { ConfigError } from '../../errors.js';
import { readJsonPage } from './json.js';
import { scanPage } from './scanner.js';
import { ScannedPage } from './scanned-page.js';

/** Options of {@link createPageParser}. */
export interface PageParserOptions {
  /**
   * Every page to `JSON.parse`, the scanner not tried (tests and benchmarks). Default: the
   * environment variable `MLS_PAGE_PARSER` is `json` (`javascript` or unset: the scanner first).
   */
  json?: boolean;
}

/**
 * Reads a logs body of a 2xx response.
 * @throws ApiProtocolError for a body off the spec.
 */
export type PageParser = (body: Buffer, status: number) => ParsedPage;

/**
 * Creates a page parser.
 * @throws ConfigError for a value of `MLS_PAGE_PARSER` other than `javascript` and `json`.
 */
export function createPageParser(options: PageParserOptions = {}): PageParser {
  const json = options.json ?? jsonFromEnv(process.env.MLS_PAGE_PARSER);
  return (body, status) => {
    const scan = json ? undefined : scanPage(body);
    return scan ? new ScannedPage(scan) : readJsonPage(body, status);
  };
}

function jsonFromEnv(value: string | undefined): boolean {
  if (value === undefined || value === '' || value === 'javascript') return false;
  if (value === 'json') return true;
  throw new ConfigError(`MLS_PAGE_PARSER must be javascript (the scanner first, the default) or json (every page to JSON.parse), got ${JSON.stringify(value.slice(0, 40))}`);
}
