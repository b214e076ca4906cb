//! What `mls demo` says at the end: the files it wrote checked against the simulator's ground
//! truth (every settled entry once in the raw sink, every settled line once in the processed
//! records), and what processing made of the model output: levels, tracebacks kept whole, a
//! traceback and a JSON line as they were shipped.
import { readdirSync, readFileSync, statSync } from 'node:fs';
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
  message?: string;
  attributes?: Record<string, unknown>;
}

/** What the demo checks the files against. */
export interface DemoTruth {
  /** Settled entries: each must be in the files exactly once. */
  entries: ReadonlyArray<{ model_id: string; time: string; stream: string; log: string }>;
  /** Settled traceback episodes: each should be one record. */
  tracebacks: ReadonlyArray<{ model_id: string; time: string; timeEnd: string; stream: string; lines: number }>;
}

/** The lines of the report, and whether the check failed. */
export function demoReport(rawDir: string, recordsDir: string, truth: DemoTruth): { text: string; failed: boolean } {
  const raw = readTree(rawDir);
  const records = readTree(recordsDir);
  const entryKey = (e: { model_id: string; time: string; stream: string; log: string }) => `${e.model_id}\u0000${e.time}\u0000${e.stream}\u0000${e.log}`;
  const lineKey = (model: string, stream: string, log: string) => `${model}\u0000${stream}\u0000${log}`;
  const rawCheck = compare(truth.entries.map(entryKey), raw.records.map(entryKey));
  const expanded = records.records.flatMap((r) => r.log.split('\n').map((l) => lineKey(r.model_id, r.stream, l)));
  const recordCheck = compare(truth.entries.map((e) => lineKey(e.model_id, e.stream, e.log)), expanded);
  const grouped = new Map(records.records.filter((r) => r.lines !== undefined).map((r) => [`${r.model_id} ${r.time}`, r]));
  const whole = truth.tracebacks.filter((t) => {
    const r = grouped.get(`${t.model_id} ${t.time}`);
    return r !== undefined && r.lines === t.lines && r.time_end === t.timeEnd;
  }).length;
  const levels = new Map<string, number>();
  for (const r of records.records) levels.set(r.level ?? 'none', (levels.get(r.level ?? 'none') ?? 0) + 1);
  const example = records.records.find((r) => (r.lines ?? 0) >= 6);
  const json = records.records.find((r) => r.attributes !== undefined);
  const out = [
    `mls demo: ${raw.records.length} entries in ${raw.files} files under ${rawDir} (raw: true, one line per entry)`,
    `mls demo: ${records.records.length} records in ${records.files} files under ${recordsDir} (default processing)`,
    `mls demo: levels read from the text: ${['fatal', 'error', 'warn', 'info', 'debug', 'none'].map((l) => `${l} ${levels.get(l) ?? 0}`).join(', ')}`,
    `mls demo: tracebacks shipped as one record: ${whole} of ${truth.tracebacks.length} settled`,
  ];
  if (example) out.push(`mls demo: a traceback record (${example.lines} lines, level ${example.level}):\n${indent(example.log, 12)}`);
  if (json) out.push(`mls demo: a JSON line: message ${JSON.stringify(json.message)}, level ${json.level ?? 'none'}, attributes ${JSON.stringify(json.attributes).slice(0, 160)}`);
  out.push(
    `mls demo: checked against the simulator: ${truth.entries.length} settled entries; raw sink ${rawCheck.missing} missing, ${rawCheck.duplicated} duplicated; ` +
      `processed records ${recordCheck.missing} lines missing, ${recordCheck.duplicated} duplicated`,
  );
  return { text: `${out.join('\n')}\n`, failed: rawCheck.missing + rawCheck.duplicated + recordCheck.missing + recordCheck.duplicated > 0 };
}

function indent(text: string, maxLines: number): string {
  const lines = text.split('\n');
  const shown = lines.length > maxLines ? [...lines.slice(0, maxLines - 2), `… (${lines.length - maxLines + 1} more lines)`, lines[lines.length - 1]!] : lines;
  return shown.map((l) => `    │ ${l}`).join('\n');
}

/** Counts missing and duplicated keys: the truth's keys must appear as often in `got` (extra keys in `got` are later entries, not settled yet). */
function compare(want: readonly string[], got: readonly string[]): { missing: number; duplicated: number } {
  const expected = new Map<string, number>();
  for (const k of want) expected.set(k, (expected.get(k) ?? 0) + 1);
  const have = new Map<string, number>();
  for (const k of got) if (expected.has(k)) have.set(k, (have.get(k) ?? 0) + 1);
  let missing = 0;
  let duplicated = 0;
  for (const [k, n] of expected) {
    const g = have.get(k) ?? 0;
    if (g < n) missing += n - g;
    if (g > n) duplicated += g - n;
  }
  return { missing, duplicated };
}

function readTree(dir: string): { files: number; records: ShippedRecord[] } {
  const out = { files: 0, records: [] as ShippedRecord[] };
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.ndjson')) {
        out.files++;
        for (const line of readFileSync(p, 'utf8').split('\n')) if (line !== '') out.records.push(JSON.parse(line) as ShippedRecord);
      }
    }
  };
  walk(dir);
  return out;
}
