//! `models_file:` — the models listed in a file of their own, for instances that poll
//! thousands of them. The file is read while the config is loaded (so also at every reload)
//! and its models are joined to the inline `models` before validation, so everything that
//! holds for inline models (defaults, sink keys, checks) holds for them. Problems found in
//! the file's models are reported with the file and the line they are on.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { interpolate, isObj, type Obj, type PathSegment, type PlaceholderFill } from './interpolate.js';
import { formatPath, type RawProblem } from './problems.js';
import { show } from './units.js';
import { readYaml, YamlSyntaxError, type YamlDocument } from './yaml.js';


/** Most problems reported for one models file; a file in the wrong format would otherwise give one per line. */
const MAX_FILE_PROBLEMS = 20;

/** The two formats of a models file. */
export type ModelsFileFormat = 'yaml' | 'text';

/** One model read from the file: the entry as the inline `models` would hold it, and where it is. */
interface FileModel {
  entry: unknown;
  /** The line of the value at `rest` below the entry (YAML only), else the entry's own line. */
  lineOf(rest: readonly PathSegment[]): number;
}

/** What {@link readModelsFile} found. */
export interface ModelsFileRead {
  models: FileModel[];
  /** Problems in the file, already located (path `models_file`, message naming file and line). */
  problems: RawProblem[];
  /** Values substituted from the environment into the file's entries, for the secret scrubber. */
  substituted: { name: string; value: string }[];
}

const YAML_EXT = new Set(['.yaml', '.yml', '.json']);

/**
 * The format of a models file: YAML for `.yaml`, `.yml` and `.json`, plain text for `.txt`;
 * any other name is YAML when its first line that is neither blank nor a comment starts with
 * `-` or `[` (a YAML list), and plain text otherwise.
 */
export function modelsFileFormat(file: string, text: string): ModelsFileFormat {
  const ext = path.extname(file).toLowerCase();
  if (YAML_EXT.has(ext)) return 'yaml';
  if (ext === '.txt') return 'text';
  const first = text.split('\n').map((l) => l.trim()).find((l) => l !== '' && !l.startsWith('#'));
  return first !== undefined && (first.startsWith('-') || first.startsWith('[')) ? 'yaml' : 'text';
}

/** The line of each problem made by {@link fileProblem}, to list them in the file's order. */
const lineOfProblem = new WeakMap<RawProblem, number>();

/** A problem of the file at `line` (0 for the file as a whole). */
export function fileProblem(file: string, line: number, message: string): RawProblem {
  const p: RawProblem = { path: ['models_file'], message: `${file}${line > 0 ? `, line ${line}` : ''}: ${message}` };
  lineOfProblem.set(p, line);
  return p;
}

/** Reads plain text: one model id per line; blank lines and `#` comments are skipped. */
function readText(file: string, text: string): ModelsFileRead {
  const out: ModelsFileRead = { models: [], problems: [], substituted: [] };
  text.split('\n').forEach((raw, i) => {
    const line = i + 1;
    // A comment starts at a # that begins the line or follows a space.
    const id = raw.replace(/(^|\s)#.*$/, '').trim();
    if (id === '') return;
    if (/\s/.test(id)) {
      out.problems.push(fileProblem(file, line, `${show(id)} is not one model id; write one id per line (settings per model need a YAML file: *.yaml, a list of entries like those of models)`));
      return;
    }
    out.models.push({ entry: { id }, lineOf: () => line });
  });
  return out;
}

/** Reads YAML: a list whose items are model ids or entries like those of `models`. */
function readYamlList(file: string, text: string, env: NodeJS.ProcessEnv, fill: PlaceholderFill | undefined): ModelsFileRead {
  const out: ModelsFileRead = { models: [], problems: [], substituted: [] };
  let doc: YamlDocument;
  try {
    doc = readYaml(text);
  } catch (err) {
    if (!(err instanceof YamlSyntaxError)) throw err;
    out.problems.push(fileProblem(file, err.line ?? 0, `${err.reason}; fix the YAML syntax`));
    return out;
  }
  const top = doc.value;
  if (top === undefined || top === null) return out;
  if (!Array.isArray(top)) {
    const hint = isObj(top) && 'models' in top ? 'write the entries at the top level of the file, without `models:`' : 'write a list of model ids or of entries like those of models';
    out.problems.push(fileProblem(file, doc.lineOf([]) ?? 1, `expected a list of models, got ${show(top)}; ${hint}`));
    return out;
  }
  const lineOf = (i: number, rest: readonly PathSegment[]): number => doc.lineOf([i, ...rest]) ?? 0;
  const interpolated = interpolate(top, env, fill);
  out.substituted.push(...interpolated.substituted);
  const items = interpolated.value as unknown[];
  const failed = new Set<number>();
  for (const p of interpolated.problems) {
    const i = p.path[0] as number;
    failed.add(i);
    out.problems.push(fileProblem(file, lineOf(i, p.path.slice(1)), `${p.path.length > 1 ? `${formatPath(p.path.slice(1))}: ` : ''}${p.message}`));
  }
  items.forEach((item, i) => {
    const line = lineOf(i, []);
    if (failed.has(i)) return;
    if (typeof item === 'string' || isObj(item)) {
      out.models.push({ entry: typeof item === 'string' ? { id: item } : item, lineOf: (rest) => lineOf(i, rest) });
    } else if (typeof item === 'number' || typeof item === 'boolean') {
      out.problems.push(fileProblem(file, line, `${show(item)} is not a model id; quote it ("${String(item)}") so that YAML reads it as text`));
    } else {
      out.problems.push(fileProblem(file, line, `expected a model id or an entry like those of models (id: ...), got ${show(item)}`));
    }
  });
  return out;
}

/** Reads and parses the models file at `file` (absolute); `fill` as for {@link interpolate}. */
export function readModelsFile(file: string, env: NodeJS.ProcessEnv, fill?: PlaceholderFill): ModelsFileRead {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'does not exist; create it or correct models_file (a relative path is resolved against the config file\'s folder)'
        : code === 'EISDIR'
          ? 'is a folder; name a file of model ids'
          : `cannot be read (${code ?? String(err)}); make it readable by the user mls runs as`;
    return { models: [], problems: [fileProblem(file, 0, why)], substituted: [] };
  }
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  text = text.replace(/\r\n/g, '\n');
  return modelsFileFormat(file, text) === 'yaml' ? readYamlList(file, text, env, fill) : readText(file, text);
}

/** How the models of a config were joined. */
export interface ModelsJoin {
  /** Problems of the file and of the join: duplicates, no model at all. */
  problems: RawProblem[];
  /** Values substituted from the environment into the file's entries. */
  substituted: { name: string; value: string }[];
  /**
   * Rewrites problems whose path is below a model that came from the file so that they name
   * the file and line instead, lists the file's problems in its order after the others,
   * and bounds how many of them are listed.
   */
  locate(problems: readonly RawProblem[]): RawProblem[];
}

/**
 * Reads `value.models_file` (when it is set) and appends its models to `value.models`
 * (mutating `value`, the interpolated config as written). A model id listed in the file
 * that is already listed inline or earlier in the file is a problem naming both places,
 * and is left out of the joined list so that it is reported once. Also says when there is
 * no model at all, which the schema cannot tell while either list may be left out.
 */
export function joinModelsFile(value: Obj, baseDir: string, env: NodeJS.ProcessEnv, fill?: PlaceholderFill): ModelsJoin {
  const spec = value.models_file;
  const problems: RawProblem[] = [];
  const origin = new Map<number, FileModel>();
  let file = '';
  let substituted: ModelsJoin['substituted'] = [];
  const locate = (all: readonly RawProblem[]): RawProblem[] => {
    const located = all.map((p) => {
      const at = p.path[0] === 'models' && typeof p.path[1] === 'number' ? origin.get(p.path[1]) : undefined;
      if (!at) return p;
      const rest = p.path.slice(2);
      return fileProblem(file, at.lineOf(rest), `${rest.length > 0 ? `${formatPath(rest)}: ` : ''}${p.message}`);
    });
    const ofFile = located.filter((p) => p.path[0] === 'models_file').sort((a, b) => (lineOfProblem.get(a) ?? 0) - (lineOfProblem.get(b) ?? 0));
    return [...located.filter((p) => p.path[0] !== 'models_file'), ...bound(file, ofFile)];
  };

  if (spec === undefined) {
    if (value.models === undefined) problems.push({ path: ['models'], message: 'is required; list the models here, or in a file named by models_file' });
    else if (Array.isArray(value.models) && value.models.length === 0) problems.push({ path: ['models'], message: 'needs at least 1 entry; list the models here, or in a file named by models_file' });
    return { problems, substituted, locate };
  }
  if (value.models === undefined) value.models = [];
  if (typeof spec !== 'string' || spec.trim() === '') return { problems, substituted, locate }; // the schema says what is wrong
  file = path.resolve(baseDir, spec);
  const read = readModelsFile(file, env, fill);
  problems.push(...read.problems);
  substituted = read.substituted;
  if (!Array.isArray(value.models)) return { problems, substituted, locate }; // the schema reports models

  const inline = value.models as unknown[];
  const seen = new Map<string, string>(); // id → where it is listed first
  inline.forEach((m, i) => {
    if (isObj(m) && typeof m.id === 'string' && !seen.has(m.id)) seen.set(m.id, `in models[${i}] of the config file`);
  });
  for (const m of read.models) {
    const id = isObj(m.entry) ? m.entry.id : undefined;
    if (typeof id === 'string') {
      const first = seen.get(id);
      if (first !== undefined) {
        problems.push(fileProblem(file, m.lineOf([]), `model ${show(id)} is already listed ${first}; list each model once: remove one of the two`));
        continue;
      }
      seen.set(id, `on line ${m.lineOf([])} of ${path.basename(file)}`);
    }
    origin.set(inline.length, m);
    inline.push(m.entry);
  }
  if (inline.length === 0 && read.problems.length === 0) {
    problems.push(fileProblem(file, 0, 'lists no model, and models lists none either; add at least one model id'));
  }
  return { problems, substituted, locate };
}

/** The first {@link MAX_FILE_PROBLEMS} problems of the file, and a line saying how many more there are. */
function bound(file: string, problems: RawProblem[]): RawProblem[] {
  if (problems.length <= MAX_FILE_PROBLEMS) return problems;
  const more = problems.length - MAX_FILE_PROBLEMS;
  return [...problems.slice(0, MAX_FILE_PROBLEMS), fileProblem(file, 0, `${more} more problem${more === 1 ? '' : 's'} not listed; fix the ones above and run mls validate again`)];
}
