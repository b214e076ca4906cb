//! Two file sinks must never write one file: each cuts the file back to its own committed
//! offset at every start, so a shared file loses the other sink's lines. This finds, exactly,
//! whether two path templates can name the same file for models the sinks receive, rotated
//! and compressed names included.
//!
//! Every time code renders a fixed number of digits and a model id renders fixed text, so
//! for one model a template names the files of one shape: literal characters and digit
//! positions. A rotated name adds a stamp (fixed digits) and may add a counter (one or more
//! digits). Two sinks share a file iff the product of their automata reaches an end of
//! both: a walk over pairs of positions, no sampling. Each sink's shapes are merged into a
//! trie first, so that many models cost about as much as their names are long.
import type { RawProblem } from '../../config/index.js';
import type { PlacedBlock } from '../definition.js';
import type { FileSinkConfig } from './config.js';
import { ROTATION_STAMP_SHAPE, gzName, gzTempName } from './rotation.js';
import { TIME_CODE_WIDTH, sanitizeModelId, templateParts } from './template.js';

/** One literal character, any one digit, or one or more digits. */
export type Item = string | typeof DIGIT | typeof DIGITS;
/** Any one decimal digit. */
export const DIGIT = 0;
/** One or more decimal digits. */
export const DIGITS = 1;

/** The names one model's files of one sink can take. */
export interface Shape {
  items: Item[];
  /** What the file is to the sink, for messages. */
  kind: 'file' | 'rotated file' | 'compressed rotated file' | 'rotated file being compressed';
  modelId: string;
}

/** A file sink as the check needs it. */
export interface FileSinkPaths {
  /** Position in `sinks`. */
  index: number;
  name: string;
  /** The path template, resolved to an absolute, normalised path. */
  template: string;
  /** The models the sink receives. */
  models: readonly string[];
  rotates: boolean;
  gzip: boolean;
}

/** Two sinks that can write one file, and an example of it. */
export interface FileOverlap {
  first: FileSinkPaths;
  second: FileSinkPaths;
  example: string;
  firstShape: Shape;
  secondShape: Shape;
}

/** Every pair of sinks (in config order) whose files can coincide, with an example name. */
export function findFileOverlaps(sinks: readonly FileSinkPaths[]): FileOverlap[] {
  // One sink has no other to meet (its tries cost time per model, at every start, that thousands of models notice).
  if (sinks.length < 2) return [];
  const tries = sinks.map((s) => ({ sink: s, trie: trieOf(shapesOf(s)) }));
  const out: FileOverlap[] = [];
  for (let i = 0; i < tries.length; i++) {
    for (let j = i + 1; j < tries.length; j++) {
      const hit = meeting(tries[i]!.trie, tries[j]!.trie);
      if (hit) out.push({ first: tries[i]!.sink, second: tries[j]!.sink, example: hit.name, firstShape: hit.a, secondShape: hit.b });
    }
  }
  return out;
}

/**
 * The overlaps among the file sinks of a parsed config, as problems on the later sink's
 * `path`. The templates are already resolved against the config's folder.
 */
export function fileOverlapProblems(blocks: ReadonlyArray<PlacedBlock<FileSinkConfig>>, modelIds: readonly string[]): RawProblem[] {
  const files: FileSinkPaths[] = blocks.map(({ index, config: s }) => ({
    index,
    name: s.name,
    template: s.path,
    models: s.models ?? modelIds,
    rotates: s.rotate !== undefined && Object.keys(s.rotate).length > 0,
    gzip: s.compress === 'gzip',
  }));
  return findFileOverlaps(files).map((o) => {
    const whose = (shape: Shape, sink: FileSinkPaths) => `${shape.kind === 'file' ? 'a file' : `a ${shape.kind}`} of sink ${sink.name} for model ${shape.modelId}`;
    return {
      path: ['sinks', o.second.index, 'path'],
      message:
        `${JSON.stringify(o.second.template)} can name the same file as sinks[${o.first.index}].path ${JSON.stringify(o.first.template)}, e.g. ${o.example} ` +
        `(${whose(o.secondShape, o.second)}, and ${whose(o.firstShape, o.first)}); each sink would cut the other's lines from it at every start. ` +
        'Give each file sink paths of its own (another folder or file name), or restrict their models so that no file is shared',
    };
  });
}

/** The shapes of every file `sink` can write. */
function shapesOf(sink: FileSinkPaths): Shape[] {
  const out: Shape[] = [];
  const add = (items: Item[], kind: Shape['kind'], modelId: string) => out.push({ items, kind, modelId });
  const parts = templateParts(sink.template);
  for (const modelId of sink.models) {
    const active: Item[] = [];
    for (const p of parts) {
      if (p.kind === 'text') active.push(...p.text);
      else if (p.kind === 'model') active.push(...sanitizeModelId(modelId));
      else for (let k = 0; k < TIME_CODE_WIDTH[p.code]; k++) active.push(DIGIT);
    }
    add(active, 'file', modelId);
    if (!sink.rotates) continue;
    for (const rotated of rotatedShapes(active)) {
      add(rotated, 'rotated file', modelId);
      if (!sink.gzip) continue;
      add([...rotated, ...gzName('')], 'compressed rotated file', modelId);
      add([...rotated, ...gzTempName('')], 'rotated file being compressed', modelId);
    }
  }
  return out;
}

/** The names `rotatedName` gives a file of shape `active`: without and with its `.N` counter. */
function rotatedShapes(active: Item[]): Item[][] {
  const slash = active.lastIndexOf('/');
  // The stamp goes before the base name's last extension, as rotatedName puts it (a digit is never a dot).
  const dot = active.lastIndexOf('.');
  const cut = dot > slash + 1 ? dot : active.length;
  const stamp: Item[] = [...ROTATION_STAMP_SHAPE].map((c) => (c === '#' ? DIGIT : c));
  const head = [...active.slice(0, cut), '.', ...stamp];
  const ext = active.slice(cut);
  return [
    [...head, ...ext],
    [...head, '.', DIGITS, ...ext],
  ];
}

/**
 * The shapes of one sink merged into a trie: shapes that share a beginning (the folder, the
 * time codes before the model id) share its nodes, so comparing two sinks walks each common
 * beginning once instead of once per pair of models.
 */
interface TrieNode {
  id: number;
  edges: Map<Item, TrieNode>;
  /** Reached through a `DIGITS` edge: more digits keep it here. */
  loop: boolean;
  /** The (first) shape that ends here, if any. */
  end: Shape | undefined;
}

function trieOf(shapes: readonly Shape[]): TrieNode {
  let size = 0;
  const node = (loop: boolean): TrieNode => ({ id: size++, edges: new Map(), loop, end: undefined });
  const root = node(false);
  for (const shape of shapes) {
    let at = root;
    for (const item of shape.items) {
      let next = at.edges.get(item);
      if (next === undefined) {
        next = node(item === DIGITS);
        at.edges.set(item, next);
      }
      at = next;
    }
    at.end ??= shape;
  }
  return root;
}

/**
 * A name both tries hold, with the shapes that name it, or undefined when there is none: a
 * breadth-first walk over pairs of nodes, each step reading one character both allow.
 */
function meeting(a: TrieNode, b: TrieNode): { name: string; a: Shape; b: Shape } | undefined {
  const seen = new Set<string>();
  const queue: Array<[TrieNode, TrieNode, string]> = [[a, b, '']];
  for (const [x, y, name] of queue) {
    if (x.end !== undefined && y.end !== undefined) return { name, a: x.end, b: y.end };
    for (const [sx, nx] of moves(x)) {
      for (const [sy, ny] of moves(y)) {
        const c = meet(sx, sy);
        const pair = `${nx.id} ${ny.id}`;
        if (c === undefined || seen.has(pair)) continue;
        seen.add(pair);
        queue.push([nx, ny, name + c]);
      }
    }
  }
  return undefined;
}

/** One character, or any one digit. */
type Step = string | typeof DIGIT;

/** The steps from a node: its edges (a `DIGITS` edge reads one digit), and its digit loop. */
function moves(n: TrieNode): Array<[Step, TrieNode]> {
  const out: Array<[Step, TrieNode]> = [];
  for (const [item, next] of n.edges) out.push([item === DIGITS ? DIGIT : item, next]);
  if (n.loop) out.push([DIGIT, n]);
  return out;
}

/** A name both shapes match, or undefined when there is none. */
export function commonName(a: readonly Item[], b: readonly Item[]): string | undefined {
  const shape = (items: readonly Item[]): Shape => ({ items: [...items], kind: 'file', modelId: '' });
  return meeting(trieOf([shape(a)]), trieOf([shape(b)]))?.name;
}

/** A character two steps both read, or undefined when there is none. */
function meet(x: Step, y: Step): string | undefined {
  const c = x === DIGIT ? (y === DIGIT ? '0' : y) : x;
  const reads = (s: Step): boolean => (s === DIGIT ? c >= '0' && c <= '9' : s === c);
  return reads(x) && reads(y) ? c : undefined;
}
