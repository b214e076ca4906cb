//! The window planner: a pure function from a model's checkpoint, the current time and
//! the poll settings to the windows to fetch next. Paging, checkpoints and dedupe do not
//! depend on how windows are chosen, only on the windows themselves.
//!
//! Two schedules:
//! - `sliding`: every poll reads `[watermark − lookback, now − settle]`; each entry is read
//!   about lookback/interval times.
//! - `sparse` (default): every poll reads only the fresh span `[watermark, now − settle]`;
//!   older spans are read again once they are older than each configured re-read age and
//!   finally once older than `lookback`. Each span is read 1 + ages + 1 times in all, and
//!   an entry that becomes visible within `lookback` of its timestamp is still delivered.
//!   Progress of the re-reads is kept as one frontier per age in the checkpoint's plan
//!   state: everything before `frontier[a]` has been read when it was at least `a` old.
//!   A model with no entry seen at or after a frontier (a quiet model) gets that re-read
//!   folded into its fresh read: one window from the frontier to now costs one request
//!   and re-reads nothing the model has returned before.
//!   With `settle: auto` a re-read may come earlier than the first configured age, at an
//!   age learned from the model's ingest delays (`firstAgeMs`); it comes in addition: the
//!   re-read at the configured age still comes, so an entry visible within that age never
//!   waits for the read at `lookback`.

/**
 * The poll settings the planner needs (milliseconds). A settings object is never changed
 * once planned with (the planner keeps the re-reads it derives from it); new settings, a new object.
 */
export interface PlannerSettings {
  lookbackMs: number;
  settleMs: number;
  maxWindowMs: number;
  /** Poll interval: sparse re-reads at the configured ages are batched to spans of at least this length. */
  intervalMs?: number;
  /**
   * How often the model is polled now (between `poll.min_interval` and the interval): a
   * fresh span is due once half of it has accrued. Default: `intervalMs`.
   */
  pollEveryMs?: number;
  /**
   * Re-read schedule; `sliding` when absent. `firstAgeMs`, learned from the model's ingest
   * delays, adds a re-read at that age when it is below the first of `agesMs` (and that
   * one below the lookback); its progress is kept under one key whatever the age, so a
   * changing age never loses it.
   */
  reread?: { mode: 'sliding' } | { mode: 'sparse'; agesMs: readonly number[]; firstAgeMs?: number | undefined };
}

/** The part of a checkpoint the planner reads. */
export interface PlannerCheckpoint {
  startMs: number;
  watermarkMs: number | undefined;
  planState?: string | undefined;
  /** Time of the newest entry seen for the model (exact ns); lets quiet models merge re-reads. */
  lastEntryNs?: bigint | undefined;
}

/** A window to fetch: both bounds inclusive, in epoch milliseconds. */
export interface PlannedWindow {
  fromMs: number;
  toMs: number;
  kind: 'fresh' | 'reread';
  /** A re-read at the earliest age of a sparse schedule that has more than one. */
  first?: true;
  /** Planner state to store once this window has been fetched to the end (sparse only). */
  planStateAfter?: string;
}

/**
 * Plans the next windows, most urgent first. Returns no window when there is nothing due
 * (e.g. after the clock stepped back behind the watermark). Completing a fresh window moves
 * the watermark to its end; a long catch-up is cut into pieces of at most `maxWindowMs`.
 */
export function planWindows(cp: PlannerCheckpoint, nowMs: number, s: PlannerSettings): PlannedWindow[] {
  return s.reread?.mode === 'sparse' ? planSparse(cp, nowMs, s, s.reread) : planSliding(cp, nowMs, s);
}

/**
 * The kind of the first window {@link planWindows} would plan now, or undefined for none:
 * the same answer without making the windows and their planner states (a poller asks after
 * every poll whether a re-read is due before it waits).
 */
export function firstWindowKind(cp: PlannerCheckpoint, nowMs: number, s: PlannerSettings): PlannedWindow['kind'] | undefined {
  const reread = s.reread;
  if (reread?.mode !== 'sparse') return planSliding(cp, nowMs, s)[0]?.kind;
  const end = Math.floor(nowMs - s.settleMs);
  const every = Math.max(1, s.pollEveryMs ?? s.intervalMs ?? 1);
  const w = cp.watermarkMs;
  if (w === undefined ? end > cp.startMs : end - w >= every / 2) return 'fresh';
  const slotList = slots(s, reread);
  const frontiers = readState(cp, slotList);
  const reached = w ?? cp.startMs;
  for (let i = 0; i < slotList.length; i++) {
    const slot = slotList[i]!;
    const target = Math.min(Math.floor(nowMs - slot.ageMs), reached);
    if (target - frontiers[i]! >= slot.chunkMs) return 'reread';
  }
  return undefined;
}

function planSliding(cp: PlannerCheckpoint, nowMs: number, s: PlannerSettings): PlannedWindow[] {
  const end = Math.floor(nowMs - s.settleMs);
  const reached = cp.watermarkMs ?? cp.startMs;
  if (end <= reached) return [];
  const begin = Math.max(cp.watermarkMs === undefined ? cp.startMs : cp.watermarkMs - s.lookbackMs, cp.startMs);
  return cut(begin, end, s.maxWindowMs).map((w) => ({ ...w, kind: 'fresh' as const }));
}

/** One re-read of the sparse schedule: where its frontier is kept, and its age now. */
interface Slot {
  /** Key of its frontier in the plan state: the configured age, or {@link EARLY_KEY}. */
  key: string;
  ageMs: number;
  /** Least span read at once (re-reads of busy models are batched). */
  chunkMs: number;
}

/** The configured ages at which spans are read again, ascending, ending with the lookback. */
export function rereadAges(s: PlannerSettings, agesMs: readonly number[]): number[] {
  return [...new Set([...agesMs.filter((a) => a > 0 && a < s.lookbackMs), s.lookbackMs])].sort((a, b) => a - b);
}

/**
 * Where the frontier of the re-read at the learned age is kept, whatever that age: no
 * configured age is 0, and the plan state's keys stay integers in ascending order.
 */
const EARLY_KEY = '0';

/** The re-reads by the settings they were made for: planned at every poll of every model. */
const slotsBySettings = new WeakMap<PlannerSettings, Slot[]>();

/** The re-reads of the sparse schedule, with one at `firstAgeMs` first if it is due. */
function slots(s: PlannerSettings, reread: { agesMs: readonly number[]; firstAgeMs?: number | undefined }): Slot[] {
  let made = slotsBySettings.get(s);
  if (!made) slotsBySettings.set(s, (made = makeSlots(s, reread)));
  return made;
}

function makeSlots(s: PlannerSettings, reread: { agesMs: readonly number[]; firstAgeMs?: number | undefined }): Slot[] {
  const interval = Math.max(1, s.intervalMs ?? 1);
  const every = Math.max(1, s.pollEveryMs ?? interval);
  const ages = rereadAges(s, reread.agesMs);
  const made = ages.map((age) => ({ key: String(age), ageMs: age, chunkMs: Math.min(Math.max(interval, age / 5), s.maxWindowMs) }));
  const early = reread.firstAgeMs;
  if (ages.length > 1 && early !== undefined && early < ages[0]!) {
    const ageMs = Math.max(1, early);
    // Read in pieces of a third of its age (at least one poll): the re-read comes at that age plus a third.
    made.unshift({ key: EARLY_KEY, ageMs, chunkMs: Math.min(Math.max(every, ageMs / 3), s.maxWindowMs) });
  }
  return made;
}

/**
 * The frontier of each slot (in the order of `slotList`), from the checkpoint's plan state.
 * A span read at an age was read at every younger age too: a frontier is never behind an
 * older age's (the learned re-read, new or back after a while, starts where the configured
 * first one is, not at the model's start).
 */
function readState(cp: PlannerCheckpoint, slotList: readonly Slot[]): number[] {
  const f = parsePlanState(cp.planState)?.f;
  const frontiers = slotList.map(({ key }) => {
    const v = f?.[key];
    return typeof v === 'number' && Number.isFinite(v) ? Math.max(v, cp.startMs) : cp.startMs;
  });
  for (let i = frontiers.length - 2; i >= 0; i--) frontiers[i] = Math.max(frontiers[i]!, frontiers[i + 1]!);
  return frontiers;
}

/** The plan state's JSON: `{"f":{"<age>":<frontier>,…}}` (re-read age in ms as the key, frontier in epoch ms). */
function encodeFrontiers(slotList: readonly Slot[], frontiers: readonly number[]): string {
  return JSON.stringify({ f: Object.fromEntries(slotList.map((slot, i) => [slot.key, frontiers[i]])) });
}

function parsePlanState(text: string | undefined): { f?: Record<string, unknown> } | undefined {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as { f?: Record<string, unknown> } | undefined;
  } catch {
    // Not ours to fail on: a plan state that cannot be read re-reads from the model's start
    // (readState), which dedupe makes harmless; the checkpoint itself is intact.
    return undefined;
  }
}

function advance(slotList: readonly Slot[], frontiers: readonly number[], w: { fromMs: number; toMs: number }, readAtMs: number): number[] {
  const next = frontiers.slice();
  for (let i = 0; i < slotList.length; i++) {
    const f = frontiers[i]!;
    // Contiguous with what is already covered: the part of the window that is at least `age` old now.
    if (w.fromMs <= f) next[i] = Math.max(f, Math.min(w.toMs, readAtMs - slotList[i]!.ageMs));
  }
  return next;
}

/**
 * The planner state to adopt once `piece` has been read at `readAtMs`, starting from the
 * checkpoint's current state: the frontiers advance over `piece` only. Used when a window
 * in progress is cut short, so that its planned state (which covered the whole window)
 * does not mark the cut-off part as read. Undefined for the sliding schedule (no state).
 */
export function planStateAfterPiece(cp: PlannerCheckpoint, piece: { fromMs: number; toMs: number }, readAtMs: number, s: PlannerSettings): string | undefined {
  if (s.reread?.mode !== 'sparse') return undefined;
  const slotList = slots(s, s.reread);
  return encodeFrontiers(slotList, advance(slotList, readState(cp, slotList), piece, readAtMs));
}

function planSparse(cp: PlannerCheckpoint, nowMs: number, s: PlannerSettings, reread: { agesMs: readonly number[]; firstAgeMs?: number | undefined }): PlannedWindow[] {
  const slotList = slots(s, reread);
  let frontiers = readState(cp, slotList);
  const end = Math.floor(nowMs - s.settleMs);
  const every = Math.max(1, s.pollEveryMs ?? s.intervalMs ?? 1);
  const out: PlannedWindow[] = [];
  const w = cp.watermarkMs;
  // Fresh span: due once half a poll period has accrued (or at once for a new model / a catch-up).
  if (w === undefined ? end > cp.startMs : end - w >= every / 2) {
    for (const piece of cut(w === undefined ? cp.startMs : mergedStart(cp, w, end, frontiers, s), end, s.maxWindowMs)) {
      frontiers = advance(slotList, frontiers, piece, nowMs);
      out.push({ ...piece, kind: 'fresh', planStateAfter: encodeFrontiers(slotList, frontiers) });
    }
  }
  if (out.length > 1) return out; // catching up: fresh pieces first, their reads count as re-reads too
  const reached = w ?? cp.startMs;
  for (let i = 0; i < slotList.length; i++) {
    const slot = slotList[i]!;
    const f = frontiers[i]!;
    const target = Math.min(Math.floor(nowMs - slot.ageMs), reached);
    if (target - f < slot.chunkMs) continue;
    for (const piece of cut(f, target, s.maxWindowMs)) {
      frontiers = advance(slotList, frontiers, piece, nowMs);
      out.push({ ...piece, kind: 'reread', planStateAfter: encodeFrontiers(slotList, frontiers), ...(i === 0 && slotList.length > 1 ? { first: true } : {}) });
    }
  }
  return out;
}

/**
 * Where a fresh read may start so that it also performs re-reads: at the oldest frontier
 * at or after which no entry has been seen, provided the whole window fits `maxWindowMs`.
 * Nothing seen there means the longer window repeats no entry already delivered.
 */
function mergedStart(cp: PlannerCheckpoint, watermarkMs: number, endMs: number, frontiers: readonly number[], s: PlannerSettings): number {
  const lastEntryMs = cp.lastEntryNs === undefined ? Number.NEGATIVE_INFINITY : Number(cp.lastEntryNs / 1_000_000n);
  let from = watermarkMs;
  for (const f of frontiers) {
    if (f < from && lastEntryMs < f && endMs - f <= s.maxWindowMs) from = f;
  }
  return from;
}

function cut(begin: number, end: number, maxWindowMs: number): Array<{ fromMs: number; toMs: number }> {
  const out: Array<{ fromMs: number; toMs: number }> = [];
  const step = Math.max(1, maxWindowMs);
  for (let from = begin; from < end; from += step) out.push({ fromMs: from, toMs: Math.min(from + step, end) });
  return out;
}

/**
 * The oldest time any future window can start at: dedupe keys older than this can go.
 * Sliding: the watermark minus the lookback. Sparse: also no later than the oldest frontier.
 */
export function pruneHorizonMs(cp: PlannerCheckpoint & { watermarkMs: number }, s: PlannerSettings): number {
  let horizon = cp.watermarkMs - s.lookbackMs;
  if (s.reread?.mode === 'sparse') {
    for (const f of readState(cp, slots(s, s.reread))) horizon = Math.min(horizon, f);
  }
  return horizon - 1_000;
}
