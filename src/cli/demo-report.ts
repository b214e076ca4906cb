//! What `mls demo` says at the end: the files it wrote checked against the simulator's ground
//! truth (every settled entry once in the raw sink, every settled line once in the processed
//! records), and what processing made of the model output: levels, tracebacks kept whole, the
//! exceptions they show per model, a traceback and a JSON line as they were shipped.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One line of a demo file. */
interface ShippedRecord {
  model_id: string;
  time: string;
  stream: string;
  log: string;
  level?: string;
  lines?: number;
  time_end?: string;
  exception?: { type: string };
  message?: string;
  attributes?: Record<string, unknown>;
}

/** What the demo checks the files against. */
export interface DemoTruth {
  /** Every entry the simulator served. */
  entries: ReadonlyArray<{ model_id: string; time: string; stream: string; log: string }>;
  /** Every traceback episode it wrote: each settled one should be one record. */
  tracebacks: ReadonlyArray<{ model_id: string; time: string; timeEnd: string; stream: string; lines: number }>;
  /** Entries of a model within this span of time (epoch ms) are settled: each must be in the files exactly once. */
  settled(modelId: string): { fromMs: number; toMs: number };
}

/** The lines of the report, and whether the check failed. */
export function demoReport(rawDir: string, recordsDir: string, truth: DemoTruth): { text: string; failed: boolean } {
  const raw = readTree(rawDir);
  const records = readTree(recordsDir);
  const settled = (model: string, time: string) => {
    const span = truth.settled(model);
    const t = Date.parse(time);
    return t >= span.fromMs && t <= span.toMs;
  };
  const entries = truth.entries.filter((e) => settled(e.model_id, e.time));
  const entryKey = (e: { model_id: string; time: string; stream: string; log: string }) => `${e.model_id}\u0000${e.time}\u0000${e.stream}\u0000${e.log}`;
  const rawCheck = compare(entries.map(entryKey), raw.records.map(entryKey));
  // A record's lines carry no times of their own: records are compared whole with the settled
  // entries they hold, and one that straddles a model's settled time is left out with its lines.
  const straddling = records.records.filter((r) => r.time_end !== undefined && settled(r.model_id, r.time) && !settled(r.model_id, r.time_end));
  const inStraddling = (e: { model_id: string; time: string; stream: string }) =>
    straddling.some((r) => r.model_id === e.model_id && r.stream === e.stream && e.time >= r.time && e.time <= r.time_end!);
  const lineKey = (model: string, stream: string, log: string) => `${model}\u0000${stream}\u0000${log}`;
  const expanded = records.records
    .filter((r) => settled(r.model_id, r.time_end ?? r.time))
    .flatMap((r) => r.log.split('\n').map((l) => lineKey(r.model_id, r.stream, l)));
  const recordCheck = compare(
    entries.filter((e) => !inStraddling(e)).map((e) => lineKey(e.model_id, e.stream, e.log)),
    expanded,
  );
  const tracebacks = truth.tracebacks.filter((t) => settled(t.model_id, t.timeEnd));
  const grouped = new Map(records.records.filter((r) => r.lines !== undefined).map((r) => [`${r.model_id} ${r.time}`, r]));
  const whole = tracebacks.filter((t) => {
    const r = grouped.get(`${t.model_id} ${t.time}`);
    return r !== undefined && r.lines === t.lines && r.time_end === t.timeEnd;
  }).length;
  const levels = countOf(records.records.map((r) => r.level ?? 'none'));
  const example = records.records.find((r) => (r.lines ?? 0) >= 6);
  const json = records.records.find((r) => r.attributes !== undefined);
  const out = [
    `mls demo: ${raw.records.length} entries shipped as ${raw.records.length} lines in ${raw.files} files under ${rawDir} (raw: true, one line per entry)`,
    `mls demo: ${records.records.reduce((n, r) => n + (r.lines ?? 1), 0)} entries shipped as ${records.records.length} records in ${records.files} files under ${recordsDir} (default processing: a traceback is one record)`,
    `mls demo: levels read from the text: ${['fatal', 'error', 'warn', 'info', 'debug', 'none'].map((l) => `${l} ${levels.get(l) ?? 0}`).join(', ')}`,
    `mls demo: tracebacks shipped as one record: ${whole} of ${tracebacks.length} settled`,
  ];
  out.push(...topExceptions(records.records));
  if (example) out.push(`mls demo: a traceback record (${example.lines} lines, level ${example.level}${example.exception ? `, exception ${example.exception.type}` : ''}):\n${indent(example.log, 12)}`);
  if (json) out.push(`mls demo: a JSON line: message ${JSON.stringify(json.message)}, level ${json.level ?? 'none'}, attributes ${JSON.stringify(json.attributes).slice(0, 160)}`);
  out.push(
    `mls demo: checked against the simulator: ${entries.length} settled entries; raw sink ${rawCheck.missing} missing, ${rawCheck.duplicated} duplicated; ` +
      `processed records ${recordCheck.missing} lines missing, ${recordCheck.duplicated} duplicated`,
  );
  return { text: `${out.join('\n')}\n`, failed: rawCheck.missing + rawCheck.duplicated + recordCheck.missing + recordCheck.duplicated > 0 };
}

/** A line per model: the exception types its records show, the most frequent first. */
function topExceptions(records: readonly ShippedRecord[]): string[] {
  const byModel = new Map<string, Map<string, number>>();
  for (const r of records) {
    if (r.exception === undefined) continue;
    let types = byModel.get(r.model_id);
    if (types === undefined) byModel.set(r.model_id, (types = new Map()));
    types.set(r.exception.type, (types.get(r.exception.type) ?? 0) + 1);
  }
  return [...byModel].sort(([a], [b]) => a.localeCompare(b)).map(([model, types]) => {
    const top = [...types].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 3);
    const total = [...types.values()].reduce((a, b) => a + b, 0);
    return `mls demo: exceptions of ${model}: ${top.map(([type, n]) => `${type} ${n}`).join(', ')} (of ${total}; mls_model_exceptions_total counts them)`;
  });
}

function indent(text: string, maxLines: number): string {
  const lines = text.split('\n');
  const shown = lines.length > maxLines ? [...lines.slice(0, maxLines - 2), `… (${lines.length - maxLines + 1} more lines)`, lines[lines.length - 1]!] : lines;
  return shown.map((l) => `    │ ${l}`).join('\n');
}

/** How many times each key occurs. */
function countOf(keys: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  return counts;
}

/** Counts missing and duplicated keys: each key must appear in `got` as often as in `want` (keys only in `got` are entries not settled yet). */
function compare(want: readonly string[], got: readonly string[]): { missing: number; duplicated: number } {
  const have = countOf(got);
  let missing = 0;
  let duplicated = 0;
  for (const [k, n] of countOf(want)) {
    const g = have.get(k) ?? 0;
    missing += Math.max(0, n - g);
    duplicated += Math.max(0, g - n);
  }
  return { missing, duplicated };
}

function readTree(dir: string): { files: number; records: ShippedRecord[] } {
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ndjson'));
  const lines = files.flatMap((name) => readFileSync(join(dir, name), 'utf8').split('\n'));
  return { files: files.length, records: lines.filter((line) => line !== '').map((line) => JSON.parse(line) as ShippedRecord) };
}
