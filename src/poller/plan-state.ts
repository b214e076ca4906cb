//! The text of a model's plan state in its checkpoint: one frontier per re-read age,
//! `{"f":{"<age>":<frontier>,…}}` (epoch ms). Written and read at every poll of every model.

/** Where a frontier is kept in the plan state: the configured age, as a string key. */
export interface FrontierSlot {
  key: string;
}

const STATE_PREFIX = '{"f":{';
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

interface SparseState {
  /** re-read age (ms, as a string key) → frontier (epoch ms) */
  f: Record<string, number>;
}

/**
 * The plan state's JSON, `{"f":{"<age>":<frontier>,…}}`, as `JSON.stringify` writes it: the
 * keys are integers in ascending order (the slots' order), which is also the order in which
 * JSON.stringify writes an object's integer keys; the values are finite numbers.
 */
export function encodeFrontiers(slotList: readonly FrontierSlot[], frontiers: readonly number[]): string {
  // Joined, not concatenated: a concatenation is a tree of string pieces, and the text stays
  // in the model's checkpoint until its next poll, long enough to be promoted to the old
  // generation (at 10,000 models, the largest part of what a quiet poll kept until the next).
  const parts: string[] = [STATE_PREFIX];
  for (let i = 0; i < slotList.length; i++) parts.push(i > 0 ? ',"' : '"', slotList[i]!.key, '":', String(frontiers[i]!));
  parts.push('}}');
  return parts.join('');
}

/**
 * The frontier of each slot (in the order of `slotList`) in a plan state, never before
 * `startMs`; `startMs` for a slot the state has no finite number for, or for a state that
 * is not JSON. Read twice at every poll of every model, from a state written at the poll
 * before: the form {@link encodeFrontiers} writes is read in place (a cache of parsed states
 * by their text cost more in lookups and kept objects than the parse it saved); any other
 * form of the same JSON goes through `JSON.parse`.
 */
export function decodeFrontiers(text: string | undefined, slotList: readonly FrontierSlot[], startMs: number): number[] {
  const frontiers = new Array<number>(slotList.length).fill(startMs);
  if (!text || readOwnForm(text, slotList, frontiers, startMs)) return frontiers;
  frontiers.fill(startMs);
  const parsed = parseState(text);
  for (let i = 0; i < slotList.length; i++) {
    const v = parsed?.f?.[slotList[i]!.key];
    if (typeof v === 'number' && Number.isFinite(v)) frontiers[i] = Math.max(v, startMs);
  }
  return frontiers;
}

/**
 * Reads `{"f":{"<key>":<number>,…}}` into `frontiers` (slots by key; keys of no slot are
 * ignored); false when the text is not in that form.
 */
function readOwnForm(text: string, slotList: readonly FrontierSlot[], frontiers: number[], startMs: number): boolean {
  if (!text.startsWith(STATE_PREFIX) || !text.endsWith('}}')) return false;
  const end = text.length - 2;
  let at = STATE_PREFIX.length;
  while (at < end) {
    if (text.charCodeAt(at) !== 34 /* " */) return false;
    const colon = text.indexOf('":', at + 1);
    if (colon < 0 || colon > end) return false;
    let next = text.indexOf(',', colon + 2);
    if (next < 0 || next > end) next = end;
    const raw = text.slice(colon + 2, next);
    // Number() also reads '', ' 1' and '0x10': only what JSON reads as a number.
    if (!JSON_NUMBER.test(raw)) return false;
    const value = Number(raw);
    if (!Number.isFinite(value)) return false;
    for (let i = 0; i < slotList.length; i++) {
      const key = slotList[i]!.key;
      if (colon - at - 1 === key.length && text.startsWith(key, at + 1)) frontiers[i] = Math.max(value, startMs);
    }
    at = next + 1;
  }
  return true;
}

function parseState(text: string): SparseState | undefined {
  try {
    return JSON.parse(text) as SparseState;
  } catch {
    // Not ours to fail on: a plan state that cannot be read re-reads from the model's start
    // (decodeFrontiers), which dedupe makes harmless; the checkpoint itself is intact.
    return undefined;
  }
}
