// The page parser's order of readers: the kernel, then the JavaScript scanner, then
// JSON.parse with the full validation; where each page ends up, what a forced first reader
// does, and a kernel that does not load (said once, with its reason; the scanner reads on).
import { describe, expect, it } from 'vitest';
import { ApiProtocolError } from '../../../src/api/errors.js';
import { ConfigError } from '../../../src/errors.js';
import { KernelUnavailable } from '../../../src/api/page/kernel/page-kernel.js';
import { createPageParser, pagePathFromEnv } from '../../../src/api/page/index.js';
import type { PagePath } from '../../../src/api/types.js';
import { preparePage } from '../../../src/poller/prepare.js';

const ENTRIES = [
  { time: '2026-11-23T10:00:00.123456789Z', stream: 'stdout', log: 'plain line' },
  { time: '2026-11-23T10:00:01Z', stream: 'stderr', log: 'caf\u00e9 "quoted"\n\ttab' },
  { time: 'not a time', stream: 'stdout', log: 'kept with its text' },
];
const BODY = Buffer.from(JSON.stringify({ status: 'success', details: ENTRIES, next_token: 'n-2' }));
/** Valid JSON the scanners leave to JSON.parse: a key given twice (JSON.parse keeps the last). */
const DUPLICATE_KEY = Buffer.from('{"status":"success","details":[{"time":"2026-11-23T10:00:00Z","log":"first","log":"second","stream":"stdout"}]}');

/** What the journal gets from a page: times, hashes, the bad-time count and every line. */
function journalView(first: PagePath, body: Buffer): unknown {
  const { page, badTimes, badExample } = preparePage(createPageParser({ first })(body, 200), 1_790_000_000_000);
  const all = Uint32Array.from({ length: page.length }, (_, i) => i);
  const legacy = Array.from({ length: page.length }, (_, i) => page.legacyHash(i));
  return { times: [...page.timesNs], hashes: [...page.hashes], legacy, badTimes, badExample, lines: page.render('m-1', all, page.length).toString('utf8') };
}

describe('createPageParser', () => {
  it.each([
    ['kernel', 'kernel'],
    ['javascript', 'javascript'],
    ['json', 'json'],
  ] as const)('reads a page with the reader it starts at, %s, and says so', (first, path) => {
    const page = createPageParser({ first })(BODY, 200);
    expect(page.path).toBe(path);
    expect(page.entries).toEqual(ENTRIES);
    expect(page.nextToken).toBe('n-2');
  });

  it('gives the journal the same times, hashes and lines whichever reader it starts at', () => {
    const fromJson = journalView('json', BODY);
    expect(fromJson).toMatchObject({ badTimes: 1, badExample: 'not a time' });
    expect(journalView('kernel', BODY)).toEqual(fromJson);
    expect(journalView('javascript', BODY)).toEqual(fromJson);
  });

  it('hands a body both scanners leave to JSON.parse, which reads it', () => {
    for (const first of ['kernel', 'javascript'] as const) {
      const page = createPageParser({ first })(DUPLICATE_KEY, 200);
      expect(page.path).toBe('json');
      expect(page.entries).toEqual([{ time: '2026-11-23T10:00:00Z', log: 'second', stream: 'stdout' }]);
    }
  });

  it('explains a malformed body through the JSON path, naming the status', () => {
    const read = createPageParser();
    expect(() => read(Buffer.from('<html>maintenance</html>'), 200)).toThrow(ApiProtocolError);
    expect(() => read(Buffer.from('<html>maintenance</html>'), 200)).toThrow(/HTTP 200\) is an HTML page/);
  });

  it('gives the body back at once from the JSON path, and at release from a scanned page', () => {
    const given: Buffer[] = [];
    const giveBack = (b: Buffer) => given.push(b);
    createPageParser({ first: 'json' })(BODY, 200, giveBack);
    expect(given).toEqual([BODY]);
    const scanned = createPageParser({ first: 'javascript' })(BODY, 200, giveBack);
    expect(given).toHaveLength(1);
    scanned.release();
    scanned.release();
    expect(given).toHaveLength(2);
    expect(given[1]).toBe(BODY);
  });

  it('says once, with the reason, that the kernel did not load, and the JavaScript scanner reads every page', () => {
    const reasons: string[] = [];
    const read = createPageParser({ kernel: new KernelUnavailable('page.wasm: no such file'), onKernelUnavailable: (r) => reasons.push(r) });
    const paths = [read(BODY, 200), read(BODY, 200), read(DUPLICATE_KEY, 200), read(BODY, 200)].map((p) => p.path);
    expect(paths).toEqual(['javascript', 'javascript', 'json', 'javascript']);
    expect(reasons).toEqual(['page.wasm: no such file']);
  });

  it('does not load the kernel when pages start at a later reader', () => {
    const reasons: string[] = [];
    for (const first of ['javascript', 'json'] as const) {
      createPageParser({ first, kernel: new KernelUnavailable('never asked'), onKernelUnavailable: (r) => reasons.push(r) })(BODY, 200);
    }
    expect(reasons).toEqual([]);
  });
});

describe('pagePathFromEnv', () => {
  it('reads MLS_PAGE_PARSER, the kernel when it is unset or empty', () => {
    expect(pagePathFromEnv({})).toBe('kernel');
    expect(pagePathFromEnv({ MLS_PAGE_PARSER: '' })).toBe('kernel');
    expect(pagePathFromEnv({ MLS_PAGE_PARSER: 'kernel' })).toBe('kernel');
    expect(pagePathFromEnv({ MLS_PAGE_PARSER: 'javascript' })).toBe('javascript');
    expect(pagePathFromEnv({ MLS_PAGE_PARSER: 'json' })).toBe('json');
  });

  it('refuses any other value, naming the variable and the accepted values', () => {
    expect(() => pagePathFromEnv({ MLS_PAGE_PARSER: 'wasm' })).toThrow(ConfigError);
    expect(() => pagePathFromEnv({ MLS_PAGE_PARSER: 'wasm' })).toThrow('MLS_PAGE_PARSER must be one of kernel, javascript, json (the first reader of pages), got "wasm"');
  });
});
