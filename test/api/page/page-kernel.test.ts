// The WebAssembly page kernel against the JavaScript path it stands in for: the same
// answer, spans, kinds and token for every body (long strings put the kernel's 16-byte
// steps across quotes, escapes and non-ASCII bytes at every offset), the same lines, pages
// that make its memory grow, bodies it hands back, and a module that is what its source
// compiles to.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { KERNEL_MAX_BODY_BYTES, PageKernel, compilePageKernel, loadPageKernel, type KernelUnavailable } from '../../../src/api/page/kernel/page-kernel.js';
import { createPageParser } from '../../../src/api/page/index.js';
import { scanInJs } from '../../../src/api/page/js-scanner.js';
import { NOT_THIS_PATH, type NotThisPath, type Scan } from '../../../src/api/page/scan.js';
import type { PagePath, ParsedPage } from '../../../src/api/types.js';
import { arbitrary, broken, wellFormed } from './wire-arbitraries.js';

const ROOT = new URL('../../../', import.meta.url);

/** What a scan found, as plain data, for comparing two scans. */
function summary(s: Scan | NotThisPath): unknown {
  if (s === NOT_THIS_PATH) return undefined;
  return { count: s.count, spans: [...s.spans.subarray(0, 6 * s.count)], kinds: [...s.kinds.subarray(0, 3 * s.count)], nextToken: s.nextToken };
}

/** The kernel compiled from the committed page.wasm. */
function theKernel(): PageKernel {
  const k = loadPageKernel();
  if (!(k instanceof PageKernel)) throw new Error(`the page kernel did not load: ${k.reason}`);
  return k;
}

/** A 200 body read by the parser that starts at `first` (with `kernel` in place of page.wasm's, if given). */
function read(first: PagePath, body: Buffer, kernel?: PageKernel | KernelUnavailable): ParsedPage {
  return createPageParser({ first, ...(kernel ? { kernel } : {}) })(body, 200);
}

/** {@link read}, or `undefined` for a body off the spec. */
function readValid(first: PagePath, body: Buffer): ParsedPage | undefined {
  try {
    return read(first, body);
  } catch {
    return undefined;
  }
}

/** The `build:kernel` script's arguments, and where its `--outFile` is. */
function kernelBuild(): { args: string[]; out: number } {
  const script = (JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { scripts: Record<string, string> }).scripts['build:kernel']!;
  const args = script.split(/\s+/).slice(1);
  const out = args.indexOf('--outFile');
  expect(out).toBeGreaterThan(0);
  return { args, out };
}

/** Compiles with AssemblyScript in memory: the kernel's source, or `source` in its place. */
async function compileKernel(args: string[], options: { source?: string } = {}): Promise<Buffer> {
  const { main } = await import('assemblyscript/asc');
  const entry = args[0]!;
  const out = args.indexOf('--outFile');
  let compiled: Uint8Array | undefined;
  const errors: string[] = [];
  const sink = { write: (s: string | Uint8Array) => void errors.push(String(s)), toString: () => errors.join('') };
  const { error } = await main(
    args.map((a, i) => (i === out + 1 ? 'page.wasm' : a)),
    {
      readFile: (name, dir) => {
        const file = `${dir === '.' ? '' : `${dir}/`}${name}`;
        if (options.source !== undefined && file === entry) return options.source;
        try {
          return readFileSync(new URL(file, ROOT), 'utf8');
        } catch {
          return null;
        }
      },
      writeFile: (name, contents) => {
        if (name.endsWith('.wasm') && typeof contents !== 'string') compiled = contents;
      },
      stdout: sink,
      stderr: sink,
    },
  );
  expect(error, errors.join('')).toBeNull();
  expect(compiled, 'asc wrote no module').toBeDefined();
  return Buffer.from(compiled!);
}

/** String contents as bytes: runs of plain ASCII of any length between the bytes the scan must stop at or note. */
const stringBytes: fc.Arbitrary<Buffer> = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 0, max: 40 }).map((n) => Buffer.from('abcdefghijklmnopqrstuvwxyz0123456789 {}[]:,'.repeat(2).slice(0, n))) },
      { weight: 2, arbitrary: fc.constantFrom('\\"', '\\\\', '\\n', '\\t', '\\b\\f\\r', '\\/', '\\u00e9', '\\ud83d\\ude00').map((t) => Buffer.from(t)) },
      { weight: 1, arbitrary: fc.constantFrom('é', '\u{1F600}', '\u007f').map((t) => Buffer.from(t)) },
      { weight: 1, arbitrary: fc.constantFrom([0xff], [0xc3], [0x80, 0x80]).map((b) => Buffer.from(b)) },
      { weight: 1, arbitrary: fc.constantFrom([0x01], [0x1f], [0x0a], [0x5c], [0x5c, 0x78]).map((b) => Buffer.from(b)) },
    ),
    { maxLength: 8 },
  )
  .map((parts) => Buffer.concat(parts));

const longStrings: fc.Arbitrary<Buffer> = fc
  .record({
    entries: fc.array(fc.record({ time: stringBytes, stream: stringBytes, log: stringBytes, order: fc.constantFrom(['time', 'stream', 'log'], ['log', 'time', 'stream'], ['stream', 'log', 'time']) }), { maxLength: 6 }),
    token: fc.option(stringBytes),
    ws: fc.constantFrom('', ' ', '\n  '),
  })
  .map(({ entries, token, ws }) => {
    const q = (b: Buffer) => Buffer.concat([Buffer.from('"'), b, Buffer.from('"')]);
    const parts: Buffer[] = [Buffer.from(`{"status":"success",${ws}"details":[`)];
    entries.forEach((e, i) => {
      if (i > 0) parts.push(Buffer.from(`,${ws}`));
      parts.push(Buffer.from('{'));
      e.order.forEach((f, j) => parts.push(Buffer.from(`${j > 0 ? ',' : ''}${ws}"${f}":${ws}`), q(e[f as 'time' | 'stream' | 'log'])));
      parts.push(Buffer.from(`${ws}}`));
    });
    parts.push(Buffer.from(']'));
    if (token !== null) parts.push(Buffer.from(',"next_token":'), q(token));
    parts.push(Buffer.from(`}${ws}`));
    return Buffer.concat(parts);
  });

describe('the page kernel', () => {
  it('is available on this platform', () => {
    expect(loadPageKernel()).toBeInstanceOf(PageKernel);
  });

  it('scans like the JavaScript scanner: same answer, spans, kinds and token', { timeout: 120_000 }, () => {
    let scanned = 0;
    fc.assert(
      fc.property(
        fc.oneof(
          { weight: 4, arbitrary: longStrings },
          { weight: 2, arbitrary: wellFormed.map((c) => Buffer.from(c.body)) },
          { weight: 1, arbitrary: broken.map((c) => Buffer.from(c.body)) },
          { weight: 1, arbitrary: arbitrary.map((c) => Buffer.from(c.body)) },
          { weight: 1, arbitrary: fc.uint8Array({ maxLength: 80 }).map((b) => Buffer.from(b)) },
        ),
        (body) => {
          const kernel = theKernel().scan(body);
          // A body over the kernel's limit is the JavaScript scanner's alone (tested below).
          if (body.length > KERNEL_MAX_BODY_BYTES) expect(kernel).toBe(NOT_THIS_PATH);
          else expect(summary(kernel)).toEqual(summary(scanInJs(body)));
          if (kernel !== NOT_THIS_PATH) scanned++;
        },
      ),
      { numRuns: 3_000, seed: Number(process.env.MLS_PROPERTY_SEED ?? 20261123) },
    );
    expect(scanned).toBeGreaterThan(300);
  });

  it('renders the lines of kept entries as the entry objects do, non-canonical strings included', () => {
    fc.assert(
      fc.property(longStrings, fc.integer({ min: 0, max: 0x7fffffff }), (body, mask) => {
        const fromScan = readValid('kernel', body);
        fc.pre(fromScan !== undefined && fromScan.path === 'kernel' && fromScan.count > 0);
        const fromEntries = read('json', body);
        const kept = Uint32Array.from({ length: fromScan!.count }, (_, i) => i).filter((i) => ((mask >>> i) & 1) === 1);
        expect(fromScan!.render('model-é"1', kept, kept.length).toString('utf8')).toBe(fromEntries.render('model-é"1', kept, kept.length).toString('utf8'));
      }),
      { numRuns: 1_000, seed: 20261124 },
    );
  });

  it('grows its memory for a large page whose lines come out longer than its body', () => {
    // Invalid UTF-8 bytes come out as U+FFFD, three bytes each: the lines outgrow the room first laid out.
    const entries: string[] = [];
    for (let i = 0; i < 4_000; i++) {
      const log = i % 2 === 0 ? `"${'\u00ff'.repeat(300)}"` : JSON.stringify(`line ${i} ${'x'.repeat(200)}`);
      entries.push(`{"time":"2026-11-23T10:00:00.${String(i).padStart(9, '0')}Z","stream":"stdout","log":${log}}`);
    }
    const text = `{"status":"success","details":[${entries.join(',')}]}`;
    // \u00ff as latin1 is the lone byte 0xff: not UTF-8.
    const body = Buffer.from(text, 'latin1');
    expect(body.length).toBeLessThan(KERNEL_MAX_BODY_BYTES);
    const page = read('kernel', body);
    expect(page.path).toBe('kernel');
    expect(page.count).toBe(4_000);
    const all = Uint32Array.from({ length: 4_000 }, (_, i) => i);
    const lines = page.render('m', all, 4_000);
    const expected = read('json', body).render('m', all, 4_000);
    expect(lines.length).toBeGreaterThan(body.length);
    expect(lines.equals(expected)).toBe(true);
  });

  it(`hands bodies over ${KERNEL_MAX_BODY_BYTES} bytes to the JavaScript path, which reads them alike`, () => {
    const entry = `{"time":"2026-11-23T10:00:00Z","stream":"stdout","log":"${'y'.repeat(1_000)}"}`;
    const body = Buffer.from(`{"status":"success","details":[${Array(Math.ceil(KERNEL_MAX_BODY_BYTES / entry.length) + 1).fill(entry).join(',')}],"next_token":"t"}`);
    expect(body.length).toBeGreaterThan(KERNEL_MAX_BODY_BYTES);
    expect(theKernel().scan(body)).toBe(NOT_THIS_PATH);
    const page = read('kernel', body);
    expect(page.path).toBe('javascript');
    expect(page.count).toBe((summary(scanInJs(body)) as { count: number }).count);
    expect(page.nextToken).toBe('t');
    const kept = Uint32Array.of(0, page.count - 1);
    expect(page.render('m', kept, 2).toString()).toBe(`{"model_id":"m","time":"2026-11-23T10:00:00Z","stream":"stdout","log":"${'y'.repeat(1_000)}"}\n`.repeat(2));
  });

  it('leaves the whole page to the JavaScript path where WebAssembly is not available', () => {
    // --jitless: V8 generates no code at all, and has no WebAssembly. The compiled daemon
    // (built by the global setup) is what runs in production.
    const script = `
      const dist = new URL('dist/', ${JSON.stringify(ROOT.href)});
      const { createPageParser } = await import(new URL('api/page/index.js', dist));
      const reasons = [];
      const read = createPageParser({ onKernelUnavailable: (reason) => reasons.push(reason) });
      const body = Buffer.from('{"status":"success","details":[{"time":"2026-11-23T10:00:00Z","stream":"stdout","log":"caf\u00e9 ok"},{"log":"plain","time":"2026-11-23T10:00:01Z","stream":"stderr"}],"next_token":"n"}');
      const page = read(body, 200);
      read(body, 200);
      const lines = page.render('m', Uint32Array.of(0, 1), 2).toString();
      console.log(JSON.stringify({ reasons, path: page.path, count: page.count, token: page.nextToken, lines }));
    `;
    const r = spawnSync(process.execPath, ['--jitless', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({
      reasons: [expect.stringMatching(/WebAssembly/)],
      path: 'javascript',
      count: 2,
      token: 'n',
      lines: '{"model_id":"m","time":"2026-11-23T10:00:00Z","stream":"stdout","log":"café ok"}\n{"model_id":"m","time":"2026-11-23T10:00:01Z","stream":"stderr","log":"plain"}\n',
    });
  });

  it('is the module its source compiles to (npm run build:kernel)', { timeout: 60_000 }, async () => {
    const { args, out } = kernelBuild();
    const committed = readFileSync(new URL(args[out + 1]!, ROOT));
    const compiled = await compileKernel(args);
    expect(compiled.equals(committed), 'src/api/page/kernel/page.wasm is stale: run npm run build:kernel').toBe(true);
  });

  it('hands the page to the JavaScript path when its memory cannot grow or it traps', { timeout: 60_000 }, async () => {
    const entry = `{"time":"2026-11-23T10:00:00Z","stream":"stdout","log":"${'z'.repeat(200)}"}`;
    const body = Buffer.from(`{"status":"success","details":[${Array(1_000).fill(entry).join(',')}]}`);
    const scan = scanInJs(body) as Scan;
    const head = Buffer.from('{"model_id":"m","time":');
    const kept = Uint32Array.of(0, 1);
    const never = (): Uint8Array => expect.fail('no entry needs the JavaScript line');

    // The real source, with its memory capped at two 64 KiB pages: a 230 KB body does not fit.
    const { args } = kernelBuild();
    const capped = compilePageKernel(await compileKernel([...args, '--maximumMemory', '2']));
    expect(capped.scan(body)).toBe(NOT_THIS_PATH);
    expect(capped.render({ body, spans: scan.spans, kinds: scan.kinds, count: scan.count, kept, n: 2, head, otherLine: never })).toBe(NOT_THIS_PATH);
    // The parser then reads the page with the JavaScript scanner, which gives the same lines.
    const passed = read('kernel', body, capped);
    expect(passed.path).toBe('javascript');
    expect(passed.render('m', kept, 2).equals(read('json', body).render('m', kept, 2))).toBe(true);
    // Small pages still go through it.
    const small = Buffer.from(`{"status":"success","details":[${entry}]}`);
    expect(capped.scan(small)).toMatchObject({ count: 1 });
    expect(read('kernel', small, capped).path).toBe('kernel');

    // A module with the same exports whose work traps.
    const trapping = compilePageKernel(
      await compileKernel(args, {
        source: `export let tokenState: i32 = 0; export let tokenStart: i32 = 0; export let tokenEnd: i32 = 0; export let tokenKind: i32 = 0; export let outAt: u32 = 0;
          export function heapBase(): usize { return __heap_base; }
          export function scan(body: usize, length: u32, spans: usize, kinds: usize, room: i32): i32 { unreachable(); return 0; }
          export function renderRun(body: usize, spans: usize, kinds: usize, kept: usize, from: i32, count: i32, head: usize, headLength: u32, out: usize): i32 { unreachable(); return 0; }`,
      }),
    );
    expect(trapping.scan(body)).toBe(NOT_THIS_PATH);
    expect(trapping.render({ body, spans: scan.spans, kinds: scan.kinds, count: scan.count, kept, n: 2, head, otherLine: never })).toBe(NOT_THIS_PATH);
    expect(read('kernel', body, trapping).path).toBe('javascript');
  });
});
