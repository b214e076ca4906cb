//! Shared pieces of the file sink tests: entries, a context whose committed state lives
//! in memory, and a reader of everything under an output directory.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, expect } from 'vitest';
import type { NdjsonChunk, Sink, SinkBatch, SinkContext, SinkEntry } from '../../../src/sinks/contract.js';
import { entryToNdjson } from '../../../src/records/ndjson.js';
import { createFileSink, type FileSinkOptions } from '../../../src/sinks/file/index.js';

/** An entry of `model` at ISO `time` whose log names its seq. */
export function entry(seq: number, opts: { model?: string; time?: string; log?: string; stream?: string } = {}): SinkEntry {
  const time = opts.time ?? '2026-11-22T10:00:00.000000001Z';
  return {
    seq,
    modelId: opts.model ?? 'm1',
    time,
    timeNs: BigInt(Date.parse(time)) * 1_000_000n,
    stream: opts.stream ?? 'stdout',
    log: opts.log ?? `line ${seq}`,
    fetchedAtMs: 0,
  };
}

/** A batch of consecutive entries. */
export function batchOf(entries: SinkEntry[]): SinkBatch {
  const first = entries[0]?.seq ?? 0;
  const last = entries[entries.length - 1]?.seq ?? 0;
  return { id: `file:${first}-${last}`, firstSeq: first, lastSeq: last, entries };
}

/** A batch as the delivery loop builds it from journal pages: the entries plus their NDJSON lines, a chunk per run of one model. */
export function withNdjson(entries: SinkEntry[]): SinkBatch {
  const chunks: NdjsonChunk[] = [];
  for (let i = 0; i < entries.length; ) {
    let j = i;
    while (j < entries.length && entries[j]!.modelId === entries[i]!.modelId) j++;
    const run = entries.slice(i, j);
    chunks.push({ modelId: run[0]!.modelId, firstSeq: run[0]!.seq, bytes: Buffer.from(run.map(entryToNdjson).join('')), timesNs: BigInt64Array.from(run.map((e) => e.timeNs)) });
    i = j;
  }
  return { ...batchOf(entries), ndjson: chunks };
}

/** A log record captured by {@link MemoryStore}. */
export interface Captured {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: object;
  msg: string | undefined;
}

/** The delivery loop's store, in memory: the committed state and cursor. */
export class MemoryStore {
  state: string | undefined;
  cursor = 0;
  logs: Captured[] = [];
  /** What the sink counted as bytes its state does not know. */
  unknownBytes: number[] = [];
  clock = Date.parse('2026-11-22T10:00:00Z');
  commits = 0;
  /** When set, `commitState` stores the state and then throws, like a crash right after the commit. */
  crashAfterCommitState = false;

  ctx(): SinkContext {
    const log = (level: Captured['level']) => (obj: object, msg?: string) => void this.logs.push({ level, obj, msg });
    return {
      name: 'file',
      state: this.state,
      now: () => this.clock,
      logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
      unknownBytes: (bytes) => void this.unknownBytes.push(bytes),
      commitState: (s: string) => {
        this.state = s;
        this.commits++;
        if (this.crashAfterCommitState) throw new Error('simulated crash after commitState');
      },
    };
  }

  /** What the delivery loop does after `ok`: commit the state with the cursor. */
  ack(lastSeq: number, state: string | undefined): void {
    this.cursor = lastSeq;
    if (state !== undefined) this.state = state;
  }

  errors(): Captured[] {
    return this.logs.filter((l) => l.level === 'error');
  }
}

/** Default options with `path` under `dir`. */
export function options(dir: string, over: Partial<FileSinkOptions> = {}): FileSinkOptions {
  return { path: join(dir, '{model_id}/%Y-%m-%d.ndjson'), fsync: 'batch', compress: 'none', file_mode: 0o644, dir_mode: 0o755, ...over };
}

/** Every file under `dir` (relative path → content), `.gz` files gunzipped (and keyed with `.gz`). */
export function readTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(dir, p)] = name.endsWith('.gz') ? gunzipSync(readFileSync(p)).toString('utf8') : readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  return out;
}

/** The seqs of all lines in all files under `dir`, from logs written as `line <seq>…`. */
export function seqsIn(dir: string): number[] {
  const seqs: number[] = [];
  for (const text of Object.values(readTree(dir))) {
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const m = /^line (\d+)/.exec((JSON.parse(line) as { log: string }).log);
      if (m) seqs.push(Number(m[1]));
    }
  }
  return seqs.sort((a, b) => a - b);
}

/** 1..n */
export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/** `n` entries with consecutive seqs from `from`. */
export function lines(n: number, from = 1, opts: Parameters<typeof entry>[1] = {}): SinkEntry[] {
  return range(from, from + n - 1).map((s) => entry(s, opts));
}

/** A signal that never aborts. */
export const signal = new AbortController().signal;

/** A fresh output folder per test, and the sinks opened in it (closed after the test). */
export interface FileSinkScratch {
  /** This test's output folder. */
  readonly dir: string;
  /** Opens a file sink on `store`'s context; it is closed after the test. */
  open(store: MemoryStore, opts: FileSinkOptions, tuning?: object): Promise<Sink>;
  /** Sends and commits like the delivery loop (the send must answer ok). */
  deliver(sink: Sink, store: MemoryStore, batch: SinkBatch): Promise<void>;
}

/** Registers the hooks of a {@link FileSinkScratch} in the calling test file. */
export function fileSinkScratch(): FileSinkScratch {
  let dir = '';
  const sinks: Sink[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mls-file-'));
  });
  afterEach(async () => {
    await Promise.all(sinks.splice(0).map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get dir() {
      return dir;
    },
    async open(store, opts, tuning = {}) {
      const sink = await createFileSink(opts, store.ctx(), tuning);
      sinks.push(sink);
      return sink;
    },
    async deliver(sink, store, batch) {
      const out = await sink.send(batch, signal);
      expect(out).toMatchObject({ status: 'ok' });
      if (out.status === 'ok') store.ack(batch.lastSeq, out.state);
    },
  };
}
