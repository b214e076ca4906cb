//! The page parser: reads a *get model logs* body into a {@link ParsedPage}. This is the one
//! place where a page's reader is chosen. A page tries, in order:
//! 1. the WebAssembly page kernel (kernel/), where it loads (WebAssembly with SIMD) and can
//!    take the page (bodies up to 4 MiB, a call that does not fail);
//! 2. the JavaScript scanner (js-scanner.ts), the same reader without SIMD;
//! 3. `JSON.parse` and the full validation (json.ts), for any body the scanners leave, such
//!    as a key given twice or anything off-spec, which it explains.
//! A reader that passes a page on answers `NOT_THIS_PATH` (scan.ts); the next one takes it.
import type { PagePath, ParsedPage } from '../types.js';
import { ConfigError } from '../../errors.js';
import type { WireOptions } from '../wire.js';
import { KernelUnavailable, loadPageKernel, type PageKernel } from './kernel/page-kernel.js';
import { scanInJs } from './js-scanner.js';
import { readJsonPage } from './json.js';
import { NOT_THIS_PATH } from './scan.js';
import { ScannedPage } from './scanned-page.js';

/** The readers in the order a page tries them. */
export const PAGE_PATHS: readonly PagePath[] = ['kernel', 'javascript', 'json'];

/** Options of {@link createPageParser}. */
export interface PageParserOptions {
  /**
   * The first reader pages try: `kernel` (the default), `javascript` (the kernel is not
   * loaded) or `json` (every page goes to `JSON.parse`). For tests and benchmarks.
   */
  first?: PagePath;
  /** Removes secrets from the excerpts of malformed bodies. */
  scrub?: WireOptions['scrub'];
  /** Told once, with the reason, when the kernel does not load: pages then start at the JavaScript scanner. */
  onKernelUnavailable?(reason: string): void;
  /** The kernel to use instead of the one compiled from page.wasm (tests). */
  kernel?: PageKernel | KernelUnavailable;
}

/**
 * Reads a logs body of a 2xx response. `giveBack` takes the body's buffer back once the
 * page no longer needs it: at once for a page of entry objects, at `release()` for a
 * scanned one.
 * @throws ApiProtocolError for a body off the spec.
 */
export type PageParser = (body: Buffer, status: number, giveBack?: (body: Buffer) => void) => ParsedPage;

/** Creates a page parser; the kernel is loaded with the first page that tries it. */
export function createPageParser(options: PageParserOptions = {}): PageParser {
  const first = options.first ?? 'kernel';
  const wire: WireOptions = options.scrub ? { scrub: options.scrub } : {};
  let kernel: PageKernel | null | undefined = first === 'kernel' ? undefined : null;

  /** The kernel, loaded on first use; `null` where it is not used or did not load. */
  const useKernel = (): PageKernel | null => {
    if (kernel === undefined) {
      const loaded = options.kernel ?? loadPageKernel();
      if (loaded instanceof KernelUnavailable) options.onKernelUnavailable?.(loaded.reason);
      kernel = loaded instanceof KernelUnavailable ? null : loaded;
    }
    return kernel;
  };

  return (body, status, giveBack) => {
    const k = useKernel();
    if (k !== null) {
      const scan = k.scan(body);
      if (scan !== NOT_THIS_PATH) return new ScannedPage('kernel', scan, k, giveBack);
    }
    if (first !== 'json') {
      const scan = scanInJs(body);
      if (scan !== NOT_THIS_PATH) return new ScannedPage('javascript', scan, undefined, giveBack);
    }
    return readJsonPage(body, status, wire, giveBack);
  };
}

/**
 * The first reader pages try, from `MLS_PAGE_PARSER` (for tests and benchmarks): `kernel`
 * when it is unset or empty.
 * @throws ConfigError for any other value than the three readers.
 */
export function pagePathFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): PagePath {
  const value = env.MLS_PAGE_PARSER;
  if (value === undefined || value === '') return 'kernel';
  const path = PAGE_PATHS.find((p) => p === value);
  if (path === undefined) throw new ConfigError(`MLS_PAGE_PARSER must be one of ${PAGE_PATHS.join(', ')} (the first reader of pages), got ${JSON.stringify(value.slice(0, 40))}`);
  return path;
}
