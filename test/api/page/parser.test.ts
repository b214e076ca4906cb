// The page parser: the scanner reads the usual page, JSON.parse every body the scanner
// leaves (a key given twice, an off-spec entry, a malformed body, which it explains), and
// MLS_PAGE_PARSER=json (or the option) sends every page to JSON.parse.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiProtocolError } from '../../../src/api/errors.js';
import { ConfigError } from '../../../src/errors.js';
import { createPageParser } from '../../../src/api/page/index.js';
import { ObjectsPage } from '../../../src/api/page/json.js';
import { ScannedPage } from '../../../src/api/page/scanned-page.js';
import { preparePage } from '../../../src/poller/prepare.js';

const ENTRIES = [
  { time: '2026-11-23T10:00:00.123456789Z', stream: 'stdout', log: 'plain line' },
  { time: '2026-11-23T10:00:01Z', stream: 'stderr', log: 'caf\u00e9 "quoted"\n\ttab' },
  { time: 'not a time', stream: 'stdout', log: 'kept with its text' },
];
const BODY = Buffer.from(JSON.stringify({ status: 'success', details: ENTRIES, next_token: 'n-2' }));
/** Valid JSON the scanner leaves to JSON.parse: a key given twice (JSON.parse keeps the last). */
const DUPLICATE_KEY = Buffer.from('{"status":"success","details":[{"time":"2026-11-23T10:00:00Z","log":"first","log":"second","stream":"stdout"}]}');
const WINDOW_FROM_MS = 1_790_000_000_000;

/** What the journal gets from a page: times, hashes, reasons and every line. */
function journalView(json: boolean, body: Buffer): unknown {
  const page = preparePage(createPageParser({ json })(body, 200), WINDOW_FROM_MS);
  const all = Uint32Array.from({ length: page.length }, (_, i) => i);
  const legacy = Array.from({ length: page.length }, (_, i) => page.legacyHash(i));
  return { times: [...page.timesNs], hashes: [...page.hashes], legacy, invalid: page.invalid && [...page.invalid], lines: page.render('m-1', all, page.length).toString('utf8') };
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('createPageParser', () => {
  it('reads a page with the scanner, and gives the journal what JSON.parse gives', () => {
    const page = createPageParser()(BODY, 200);
    expect(page).toBeInstanceOf(ScannedPage);
    expect(page.entries).toEqual(ENTRIES);
    expect(page.nextToken).toBe('n-2');
    const fromJson = journalView(true, BODY);
    // the entry without a time: the window's start, keyed by its text, reason time_unparsable
    expect(fromJson).toMatchObject({ invalid: [0, 0, 2] });
    expect((fromJson as { times: bigint[] }).times[2]).toBe(BigInt(WINDOW_FROM_MS) * 1_000_000n);
    expect(journalView(false, BODY)).toEqual(fromJson);
  });

  it('hands a body the scanner leaves to JSON.parse, which reads it', () => {
    const page = createPageParser()(DUPLICATE_KEY, 200);
    expect(page).toBeInstanceOf(ObjectsPage);
    expect(page.entries).toEqual([{ time: '2026-11-23T10:00:00Z', log: 'second', stream: 'stdout' }]);
  });

  it('reads a page with an off-spec entry through JSON.parse: the entry kept as text, the others as they are', () => {
    const body = Buffer.from(JSON.stringify({ status: 'success', details: [ENTRIES[0], { ...ENTRIES[1], log: 42 }] }));
    const page = createPageParser()(body, 200);
    expect(page).toBeInstanceOf(ObjectsPage);
    expect(page.entries).toEqual([ENTRIES[0], { ...ENTRIES[1], log: '42' }]);
    expect(journalView(false, body)).toMatchObject({ invalid: [0, 4] });
  });

  it('explains a malformed body through JSON.parse, naming the status', () => {
    const read = createPageParser();
    expect(() => read(Buffer.from('<html>maintenance</html>'), 200)).toThrow(ApiProtocolError);
    expect(() => read(Buffer.from('<html>maintenance</html>'), 200)).toThrow(/HTTP 200\) is an HTML page/);
  });

  it('sends every page to JSON.parse with MLS_PAGE_PARSER=json, unless the option says otherwise', () => {
    vi.stubEnv('MLS_PAGE_PARSER', 'json');
    expect(createPageParser()(BODY, 200)).toBeInstanceOf(ObjectsPage);
    expect(createPageParser({ json: false })(BODY, 200)).toBeInstanceOf(ScannedPage);
    vi.stubEnv('MLS_PAGE_PARSER', 'javascript');
    expect(createPageParser()(BODY, 200)).toBeInstanceOf(ScannedPage);
  });

  it('refuses any other MLS_PAGE_PARSER, naming the variable and the accepted values', () => {
    vi.stubEnv('MLS_PAGE_PARSER', 'kernel');
    expect(() => createPageParser()).toThrow(ConfigError);
    expect(() => createPageParser()).toThrow('MLS_PAGE_PARSER must be javascript (the scanner first, the default) or json (every page to JSON.parse), got "kernel"');
  });
});
