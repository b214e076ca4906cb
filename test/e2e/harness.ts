// Whole-daemon test harness: writes a config, runs `mls run` as a child process, kills it,
// waits for it to drain, and compares sink output with the simulator's ground truth.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { StateReader } from '../../src/journal/reader.js';
import { parseEntryTime } from '../../src/time/timestamp.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const MLS_BIN = join(ROOT, 'dist', 'cli', 'main.js');

/** A running `mls` child process with its captured output. */
export interface MlsProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `mls <args>` with `env` added to the environment; `nodeArgs` go to node, before the script. */
export function startMls(args: string[], env: Record<string, string> = {}, nodeArgs: readonly string[] = []): MlsProcess {
  const child = spawn(process.execPath, [...nodeArgs, MLS_BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Runs `mls <args>` to completion. */
export async function runMls(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = startMls(args, env);
  const { code } = await p.exited;
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}

/** Writes a config object as YAML and returns its path. */
export function writeConfig(dir: string, config: unknown, name = 'mls.yaml'): string {
  const path = join(dir, name);
  writeFileSync(path, stringify(config));
  return path;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Polls `check` until it returns true or `timeoutMs` passes. On a timeout the error carries
 * what `explain` says about the state of things, if given.
 */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string, everyMs = 200, explain?: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${explain ? `\n${explain()}` : ''}`);
    await sleep(everyMs);
  }
}

/**
 * Reads checkpoints and cursors from a state file without disturbing a running daemon. A
 * sink's cursor here is the seq through which every line is delivered: a line held in an
 * open multiline group is not, though the sink's own cursor may have passed it.
 */
export function readState(path: string): { watermarks: Map<string, number | undefined>; starts: Map<string, number>; cursors: Map<string, number>; lastSeq: number } | undefined {
  if (!existsSync(path)) return undefined;
  let store: StateReader | undefined;
  try {
    store = StateReader.open(path);
    const cps = store.listCheckpoints();
    return {
      watermarks: new Map(cps.map((c) => [c.modelId, c.watermarkMs])),
      starts: new Map(cps.map((c) => [c.modelId, c.startMs])),
      cursors: new Map(store.listSinks().map((s) => [s.name, s.holdSeq === undefined ? s.cursor : Math.min(s.cursor, s.holdSeq - 1)])),
      lastSeq: store.lastSeq(),
    };
  } catch {
    return undefined;
  } finally {
    store?.close();
  }
}

/** The identity of an entry for multiset comparison. */
export function entryKey(e: { model_id: string; time: string; stream: string; log: string }): string {
  return JSON.stringify([e.model_id, e.time, e.stream, e.log]);
}

/** Reads every NDJSON line under `dir` (recursively). Throws on a torn or invalid line. */
export function readNdjsonTree(dir: string): Array<{ model_id: string; time: string; stream: string; log: string }> {
  const out: Array<{ model_id: string; time: string; stream: string; log: string }> = [];
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      out.push(...readNdjsonTree(p));
      continue;
    }
    if (!name.endsWith('.ndjson')) continue;
    const text = readFileSync(p, 'utf8');
    if (text.length > 0 && !text.endsWith('\n')) throw new Error(`${p} ends with a partial line`);
    for (const line of text.split('\n')) if (line !== '') out.push(JSON.parse(line) as (typeof out)[number]);
  }
  return out;
}

/** Loss/duplication figures of `got` against `expected` (multisets of entryKey). */
export function compareMultisets(expected: Iterable<string>, got: Iterable<string>): { expected: number; delivered: number; lost: number; duplicated: number; unexpected: number } {
  const want = new Map<string, number>();
  let expectedN = 0;
  for (const k of expected) {
    want.set(k, (want.get(k) ?? 0) + 1);
    expectedN++;
  }
  const have = new Map<string, number>();
  let deliveredN = 0;
  for (const k of got) {
    have.set(k, (have.get(k) ?? 0) + 1);
    deliveredN++;
  }
  let lost = 0;
  let duplicated = 0;
  let unexpected = 0;
  for (const [k, n] of want) {
    const h = have.get(k) ?? 0;
    if (h < n) lost += n - h;
    if (h > n) duplicated += h - n;
  }
  for (const [k, n] of have) if (!want.has(k)) unexpected += n;
  return { expected: expectedN, delivered: deliveredN, lost, duplicated, unexpected };
}

/**
 * Ground-truth entries of a model at or after its start (ms-truncated, as windows are
 * inclusive in ms); an entry served off the spec by its own time.
 */
export function truthSince<T extends { model_id: string; time: string; off_spec?: { time: string } }>(truth: readonly T[], starts: ReadonlyMap<string, number>): T[] {
  return truth.filter((e) => {
    const start = starts.get(e.model_id);
    const t = parseEntryTime(e.off_spec?.time ?? e.time);
    return start !== undefined && t.ok && t.ns / 1_000_000n >= BigInt(start);
  });
}

/** The admin server's address, from the daemon's "admin server listening" line. */
export async function adminAddress(p: MlsProcess): Promise<string> {
  let address = '';
  await waitFor(() => {
    const m = /"address":"([^"]+)"[^\n]*admin server listening/.exec(p.stderr());
    if (m) address = m[1]!;
    return address !== '';
  }, 15_000, 'the admin server to listen');
  return address;
}

/** A seeded pseudo-random generator (mulberry32): the same kills at the same moments for a seed. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Starts `mls run --config <config>` `kills` times and SIGKILLs it each time after
 * `minMs` plus a random part of `spreadMs`; fails if a run exits by itself. Returns the
 * stderr of every run.
 */
export async function killRepeatedly(config: string, env: Record<string, string>, o: { kills: number; seed: number; minMs: number; spreadMs: number }): Promise<string[]> {
  const rnd = mulberry32(o.seed);
  const stderrs: string[] = [];
  for (let i = 0; i < o.kills; i++) {
    const p = startMls(['run', '--config', config], env);
    await sleep(o.minMs + Math.floor(rnd() * o.spreadMs));
    p.child.kill('SIGKILL');
    const { signal, code } = await p.exited;
    if (signal !== 'SIGKILL') throw new Error(`daemon exited by itself (code ${code}) before the kill:\n${p.stderr()}`);
    stderrs.push(p.stderr());
  }
  return stderrs;
}
