//! The open multiline groups a sink commits with its cursor, as text: for each group its
//! model, stream, phase and the seqs of its lines (as runs), so that a restart reopens
//! exactly the groups that were open, from the journal, and nothing else is read again.
import type { BlockPhase } from '../../processing/multiline-python.js';

/** One open group as committed. */
export interface HeldGroup {
  modelId: string;
  stream: string;
  phase: BlockPhase;
  /** The seqs of its lines, in the order they joined it. */
  seqs: number[];
}

const PHASES: ReadonlySet<string> = new Set<BlockPhase>(['heading', 'frames', 'raised', 'chain', 'group', 'custom']);

/** The committed text of `groups` (undefined when there are none) and the lowest seq they hold. */
export function encodeHeld(groups: readonly HeldGroup[]): { json: string | undefined; holdSeq: number | undefined } {
  if (groups.length === 0) return { json: undefined, holdSeq: undefined };
  let holdSeq = Number.POSITIVE_INFINITY;
  const rows = groups.map((g) => {
    for (const s of g.seqs) if (s < holdSeq) holdSeq = s;
    return [g.modelId, g.stream, g.phase, runs(g.seqs)];
  });
  return { json: JSON.stringify({ v: 1, g: rows }), holdSeq };
}

/** The groups of a committed text; throws an Error saying what is wrong when it is not one. */
export function decodeHeld(json: string | undefined): HeldGroup[] {
  if (json === undefined) return [];
  const doc = JSON.parse(json) as { v?: unknown; g?: unknown };
  if (doc.v !== 1 || !Array.isArray(doc.g)) throw new Error('held groups: unknown format');
  return doc.g.map((row: unknown) => {
    if (!Array.isArray(row) || row.length !== 4) throw new Error('held groups: malformed group');
    const [modelId, stream, phase, seqRuns] = row as [unknown, unknown, unknown, unknown];
    if (typeof modelId !== 'string' || typeof stream !== 'string' || typeof phase !== 'string' || !PHASES.has(phase) || !Array.isArray(seqRuns)) {
      throw new Error('held groups: malformed group');
    }
    return { modelId, stream, phase: phase as BlockPhase, seqs: unruns(seqRuns) };
  });
}

/** `[first, count]` pairs of consecutive seqs, in order. */
function runs(seqs: readonly number[]): number[][] {
  const out: number[][] = [];
  for (const s of seqs) {
    const last = out[out.length - 1];
    if (last !== undefined && last[0]! + last[1]! === s) last[1]!++;
    else out.push([s, 1]);
  }
  return out;
}

function unruns(pairs: readonly unknown[]): number[] {
  const out: number[] = [];
  for (const p of pairs) {
    if (!Array.isArray(p) || !Number.isSafeInteger(p[0]) || !Number.isSafeInteger(p[1]) || (p[1] as number) < 1) throw new Error('held groups: malformed seqs');
    for (let i = 0; i < (p[1] as number); i++) out.push((p[0] as number) + i);
  }
  return out;
}
