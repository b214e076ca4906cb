// Shared helpers of the benchmarks: the daemon as a child process, /proc readings,
// the state file read-only, statistics and formatting.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StateReader } from '../../dist/journal/reader.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const MLS = join(ROOT, 'dist/cli/main.js');
export const TOKEN = 'bench-token-0123456789';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A fresh working folder under the OS temp dir; removed by `cleanup()`. */
export function workDir(name) {
  const dir = mkdtempSync(join(tmpdir(), `mls-bench-${name}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A base config for the daemon against a simulator at `url` (JSON is valid YAML). */
export function baseConfig(url, statePath, extra = {}) {
  return {
    api: { base_url: url, token: TOKEN, retry: { deadline: '30s' } },
    state: { path: statePath },
    log: { level: 'warn' },
    shutdown_timeout: '20s',
    ...extra,
  };
}

export function writeConfig(dir, config) {
  const path = join(dir, 'mls.yaml');
  writeFileSync(path, JSON.stringify(config, null, 2));
  return path;
}

/**
 * The environment and Node.js flags on the `#!/usr/bin/env -S VAR=… NODE_OPTIONS="…" node` line
 * of the `mls` executable: its NODE_OPTIONS (less the operator's, which it appends) as flags.
 */
export function shippedCommand() {
  const first = readFileSync(MLS, 'utf8').split('\n', 1)[0];
  const m = /^#!\/usr\/bin\/env -S (.*) node$/.exec(first);
  const env = Object.fromEntries([...(m?.[1] ?? '').matchAll(/(\w+)=(?:"([^"]*)"|(\S+))/g)].map((x) => [x[1], x[2] ?? x[3]]));
  const nodeArgs = (env.NODE_OPTIONS ?? '').split(' ').filter((w) => w !== '' && w !== '${NODE_OPTIONS}');
  delete env.NODE_OPTIONS;
  return { env, nodeArgs };
}

/** The Node.js flags on the shebang line of the `mls` executable. */
export function shippedNodeArgs() {
  return shippedCommand().nodeArgs;
}

/**
 * Starts `mls run --config <file>` as a child process. `nodeArgs` go before the script
 * (e.g. --cpu-prof); `mls` is the build's dist/cli/main.js (this checkout's by default).
 * stderr is kept (last 64 KiB) for error reports.
 */
export function spawnDaemon(configPath, { nodeArgs = [], env = {}, mls = MLS } = {}) {
  const startedAt = performance.now();
  const startedWall = Date.now();
  // The daemon runs with the Node.js flags its executable ships with (the `#!/usr/bin/env -S
  // node …` line of dist/cli/main.js), as `mls run` does. MLS_BENCH_DAEMON_NODE_ARGS adds
  // flags for experiments (recorded in the results).
  const extraArgs = [...shippedNodeArgs(), ...(process.env.MLS_BENCH_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean)];
  const child = spawn(process.execPath, [...extraArgs, ...nodeArgs, mls, 'run', '--config', configPath], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ...shippedCommand().env, ...env },
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-65536);
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    pid: child.pid,
    startedAt,
    startedWall,
    stderr: () => stderr,
    exited,
    alive: () => child.exitCode === null && child.signalCode === null,
    /** SIGTERM, then SIGKILL after `graceMs`. */
    async stop(graceMs = 30_000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
        const r = await exited;
        clearTimeout(t);
        return r;
      }
      return exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      return exited;
    },
  };
}

/** A port nothing listens on (bound, then released). */
export async function closedPort() {
  const srv = createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

// ---- /proc --------------------------------------------------------------------------

/** USER_HZ: Linux reports CPU times in /proc in 1/100 s on every common platform (getconf CLK_TCK). */
const clkTck = 100;

/** utime + stime of a process, in seconds. */
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); utime is field 14, stime field 15.
  return (Number(fields[11]) + Number(fields[12])) / clkTck;
}

/**
 * CPU seconds of a process's live threads by kind: `main` (the event loop's thread), `v8`
 * (V8's helpers: concurrent marking and sweeping, parallel scavenges, background compiles),
 * `pool` (libuv's pool: file I/O, fsync) and `other`; and how long the main thread waited
 * for a CPU while runnable (`mainRunqWait`, from its schedstat; undefined where the kernel
 * keeps none). A thread that already exited is not counted.
 */
export function threadCpu(pid) {
  const out = { main: 0, v8: 0, pool: 0, other: 0, mainRunqWait: undefined };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // exited since the listing
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const seconds = (Number(fields[11]) + Number(fields[12])) / clkTck;
    const kind = tid === String(pid) ? 'main' : name.startsWith('V8Worker') ? 'v8' : name.startsWith('libuv-worker') ? 'pool' : 'other';
    out[kind] += seconds;
  }
  try {
    // run time, run-queue wait, timeslices; the first two in nanoseconds
    out.mainRunqWait = Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e9;
  } catch {
    // no schedstats in this kernel
  }
  return out;
}

/** VmRSS and VmHWM of a process, in bytes. */
export function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM'), anon: kb('RssAnon'), file: kb('RssFile') };
}

/** CPU model and count, total memory, Node version: for the results file. */
export function machine() {
  let cpu = 'unknown';
  try {
    cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpu;
  } catch {
    /* not Linux */
  }
  let memTotal;
  try {
    memTotal = Number(/MemTotal:\s+(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1]) * 1024;
  } catch {
    /* not Linux */
  }
  let load;
  try {
    load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    /* not Linux */
  }
  return { cpu, cores: (globalThis.navigator?.hardwareConcurrency ?? 0) || undefined, memTotal, node: process.version, loadavg_at_start: load };
}

// ---- the state file, read-only -------------------------------------------------------

/**
 * Opens the daemon's state file read-only through the StateReader API (WAL lets it read
 * while the daemon writes), so the benchmarks follow the store's schema whatever it is.
 */
export function openStateReadonly(path) {
  const store = StateReader.open(path);
  return {
    /** [{ name, cursor, delivered, … }] */
    sinks: () => store.listSinks(),
    lastSeq: () => store.lastSeq(),
    /** [{ modelId, watermarkMs, window, planState, … }] */
    checkpoints: () => store.listCheckpoints(),
    close: () => store.close(),
  };
}

/** Polls `fn` every `everyMs` until it returns a truthy value or `timeoutMs` passes. */
export async function waitFor(fn, { everyMs = 50, timeoutMs = 60_000, what = 'condition' } = {}) {
  const until = performance.now() + timeoutMs;
  for (;;) {
    let v;
    try {
      v = await fn();
    } catch {
      v = undefined;
    }
    if (v) return v;
    if (performance.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

// ---- statistics and formatting -------------------------------------------------------

export function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export function median(values) {
  return quantile([...values].sort((a, b) => a - b), 0.5);
}

export const round = (x, digits = 2) => (Number.isFinite(x) ? Number(x.toFixed(digits)) : x);
export const mb = (bytes) => round(bytes / (1024 * 1024), 1);
export const fmtInt = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : String(n));

export function ensureDir(p) {
  mkdirSync(p, { recursive: true });
  return p;
}

/** Prints a progress line on stderr. */
export function say(bench, msg) {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${bench}: ${msg}\n`);
}
