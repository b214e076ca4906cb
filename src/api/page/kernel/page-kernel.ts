//! The WebAssembly page kernel (page.as.ts, compiled to page.wasm): the body scanner's and
//! the journal lines' byte loops, run over copies of the page in the module's memory. The
//! JavaScript versions (../js-scanner.ts, ../scanned-page.ts) give the same results byte for
//! byte (property-tested) and take over whenever the module cannot: a platform without
//! WebAssembly SIMD, a body over {@link KERNEL_MAX_BODY_BYTES}, a page with more entries
//! than the layout made room for, a call that fails (memory that cannot grow, a trap).
import { readFileSync } from 'node:fs';
import { describeError } from '../../../errors.js';
import { NOT_THIS_PATH, tokenValue, type NotThisPath, type Scan, type StringKind } from '../scan.js';

/**
 * Largest body the kernel takes. Its memory grows to about three times the largest page
 * it has seen and never shrinks, so larger pages go to the JavaScript path instead.
 */
export const KERNEL_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** What {@link PageKernel.render} renders: a scanned body and the entries kept from it. */
export interface KernelRender {
  body: Uint8Array;
  /** The scan's spans and kinds, for `count` entries. */
  spans: Uint32Array;
  kinds: Uint8Array;
  count: number;
  /** Indexes of the entries to render, in order: the first `n`. */
  kept: Uint32Array;
  n: number;
  /** What each line starts with: `{"model_id":…,"time":`. */
  head: Uint8Array;
  /** The whole line of an entry with a string of kind OTHER. */
  otherLine(entry: number): Uint8Array;
}

// The part of the WebAssembly JavaScript API used here: TypeScript declares it only in its DOM library.
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: object) => { exports: unknown };
  RuntimeError: new () => Error;
};
/** A compiled WebAssembly module. */
export interface WasmModule {
  readonly __wasmModule?: never;
}
interface WasmGlobal {
  value: number;
}

interface Exports {
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
  heapBase(): number;
  scan(body: number, length: number, spans: number, kinds: number, room: number): number;
  renderRun(body: number, spans: number, kinds: number, kept: number, from: number, count: number, head: number, headLength: number, out: number): number;
  tokenState: WasmGlobal;
  tokenStart: WasmGlobal;
  tokenEnd: WasmGlobal;
  tokenKind: WasmGlobal;
  outAt: WasmGlobal;
}

/** The shortest entry, `{"time":"","stream":"","log":""}`, and its comma: no page holds more entries than its bytes ÷ 34. */
const MIN_ENTRY_BYTES = 34;
/** A line's bytes beyond its three strings' contents and the head: quotes, keys, `}\n`. */
const LINE_OVERHEAD = 2 + 10 + 2 + 7 + 2 + 2;
const PAGE = 65536;

const align = (n: number, to: number): number => Math.ceil(n / to) * to;

/** Where a body of `length` bytes at `at`, and the spans and kinds of `entries` entries, go. */
function pageLayout(at: number, length: number, entries: number): { spansAt: number; kindsAt: number; end: number } {
  const spansAt = align(at + length, 8);
  const kindsAt = spansAt + 24 * entries;
  return { spansAt, kindsAt, end: kindsAt + 3 * entries };
}

/** The module instance and its memory; used by one thread, one call at a time. */
export class PageKernel {
  readonly #x: Exports;
  readonly #base: number;
  #bytes: Uint8Array;

  constructor(module: WasmModule) {
    this.#x = new WebAssembly.Instance(module, {}).exports as unknown as Exports;
    this.#base = align(this.#x.heapBase(), 16);
    this.#bytes = new Uint8Array(this.#x.memory.buffer);
  }

  /** The memory as bytes, at least `size` of them. Growing detaches the old views. */
  #room(size: number): Uint8Array {
    const have = this.#x.memory.buffer.byteLength;
    if (size > have) this.#x.memory.grow(Math.ceil((size - have) / PAGE));
    if (this.#bytes.buffer !== this.#x.memory.buffer) this.#bytes = new Uint8Array(this.#x.memory.buffer);
    return this.#bytes;
  }

  /**
   * Scans a *get model logs* body (of a 2xx response), as the JavaScript scanner does.
   * {@link NOT_THIS_PATH} for a body it leaves to `JSON.parse`, and for one it cannot take.
   */
  scan(body: Buffer): Scan | NotThisPath {
    try {
      return this.#scan(body);
    } catch (err) {
      return kernelFailed(err);
    }
  }

  #scan(body: Buffer): Scan | NotThisPath {
    const length = body.length;
    if (length > KERNEL_MAX_BODY_BYTES) return NOT_THIS_PATH;
    const room = Math.floor(length / MIN_ENTRY_BYTES) + 1;
    const at = this.#base;
    const { spansAt, kindsAt, end } = pageLayout(at, length, room);
    const mem = this.#room(end);
    mem.set(body, at);
    const x = this.#x;
    // -1: a body left to JSON.parse; -2: more entries than the room laid out.
    const count = x.scan(at, length, spansAt, kindsAt, room);
    if (count < 0) return NOT_THIS_PATH;
    const spans = new Uint32Array(6 * count);
    spans.set(new Uint32Array(mem.buffer, spansAt, 6 * count));
    const kinds = mem.slice(kindsAt, kindsAt + 3 * count);
    const nextToken = x.tokenState.value === 1 ? tokenValue(body, x.tokenStart.value, x.tokenEnd.value, x.tokenKind.value as StringKind) : undefined;
    return { body, count, spans, kinds, nextToken };
  }

  /**
   * Renders the journal lines of entries `kept[0..n)` of a scanned body: `head`, then the
   * entry's time, stream and log as JSON strings, then `}\n`. Strings of kind OTHER are
   * not canonical as they are: the lines of such entries come from `otherLine`.
   */
  render(page: KernelRender): Buffer | NotThisPath {
    try {
      return this.#render(page);
    } catch (err) {
      return kernelFailed(err);
    }
  }

  #render({ body, spans, kinds, count, kept, n, head, otherLine }: KernelRender): Buffer | NotThisPath {
    const length = body.length;
    if (length > KERNEL_MAX_BODY_BYTES) return NOT_THIS_PATH;
    const bodyAt = this.#base;
    const { spansAt, kindsAt, end } = pageLayout(bodyAt, length, count);
    const keptAt = align(end, 4);
    const headAt = keptAt + 4 * n;
    const out = align(headAt + head.length, 16);
    // The lines of distinct entries hold each byte of the body at most once.
    const perLine = head.length + LINE_OVERHEAD;
    let mem = this.#room(out + n * perLine + length);
    mem.set(body, bodyAt);
    new Uint32Array(mem.buffer, spansAt, 6 * count).set(spans.subarray(0, 6 * count));
    mem.set(kinds.subarray(0, 3 * count), kindsAt);
    new Uint32Array(mem.buffer, keptAt, n).set(kept.subarray(0, n));
    mem.set(head, headAt);
    const x = this.#x;
    let o = out;
    let k = 0;
    while (k < n) {
      k = x.renderRun(bodyAt, spansAt, kindsAt, keptAt, k, n, headAt, head.length, o);
      o = x.outAt.value >>> 0;
      if (k < n) {
        const line = otherLine(kept[k]!);
        mem = this.#room(o + line.length + (n - k - 1) * perLine + length);
        mem.set(line, o);
        o += line.length;
        k++;
      }
    }
    const lines = Buffer.allocUnsafe(o - out);
    lines.set(mem.subarray(out, o));
    return lines;
  }
}

/**
 * What a call does when the module fails: its memory could not grow (the process is short
 * of memory), or it trapped. The page goes to the JavaScript path, which gives the same
 * result; the kernel's memory is left as it was, ready for the next page.
 */
function kernelFailed(err: unknown): NotThisPath {
  if (err instanceof RangeError || err instanceof WebAssembly.RuntimeError) return NOT_THIS_PATH;
  throw err;
}

/** A kernel from a compiled page.wasm (or a module with the same exports). */
export function compilePageKernel(bytes: Uint8Array): PageKernel {
  return new PageKernel(new WebAssembly.Module(bytes));
}

/** Why the kernel could not be compiled: no WebAssembly with SIMD, or page.wasm missing or damaged. */
export class KernelUnavailable {
  constructor(readonly reason: string) {}
}

let loaded: PageKernel | KernelUnavailable | undefined;

/** The kernel compiled from the page.wasm beside this module, on first use (once per process). */
export function loadPageKernel(): PageKernel | KernelUnavailable {
  if (loaded === undefined) {
    try {
      loaded = compilePageKernel(readFileSync(new URL('./page.wasm', import.meta.url)));
    } catch (err) {
      loaded = new KernelUnavailable(describeError(err));
    }
  }
  return loaded;
}
