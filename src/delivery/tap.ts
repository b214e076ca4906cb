//! `mls tap` in the daemon: each batch, as a sink's send is handed it, is counted (the
//! records per sink that `mls top` shows as a rate) and copied to the tap clients that asked
//! for it over the control socket, as the NDJSON lines the sink gets (processing and
//! redaction applied). Nothing here waits for a client: one that does not keep up loses
//! records, counted and told to it, and never slows a delivery loop.
import { z } from 'zod';
import type { SinkBatch } from '../sinks/contract.js';
import { entryToNdjson } from '../records/ndjson.js';
import { LEVELS, LEVEL_INDEX } from '../processing/types.js';
import { UsageError } from '../errors.js';
import { configErrorMap, formatProblem, issuesToProblems } from '../config/problems.js';

/** One event of a tap: records of one sink as NDJSON lines, and the records the client lost so far. */
export interface TapEvent {
  sink: string;
  lines: string;
  dropped: number;
}

/**
 * Sends one event to a client; false when it was not sent because the client is not
 * reading (the control server's bound on what it holds for a client).
 */
export type TapSend = (event: TapEvent) => boolean;

/** What a tap asks for; each given field narrows what it gets (`level`: that level or more severe; records without one are left out). */
const filterSchema = z.strictObject({ model: z.string().min(1).optional(), sink: z.string().min(1).optional(), level: z.enum(LEVELS).optional() });
type TapFilter = z.infer<typeof filterSchema>;

interface TapClient {
  filter: TapFilter;
  send: TapSend;
  dropped: number;
}

/** One line of a batch, with its model and (read only when a client filters on it) its level. */
interface TapLine {
  modelId: string;
  line: string;
  level?: number;
}

/** The daemon's taps. */
export class TapHub {
  readonly #clients = new Set<TapClient>();

  /** `onRecords` counts each batch's records, per sink. */
  constructor(private readonly onRecords: (sink: string, records: number) => void = () => {}) {}

  /** A sink's send is about to get `batch` (called once per batch, not again for a retry). Never throws. */
  offer(sink: string, batch: SinkBatch): void {
    const count = batch.count ?? batch.entries.length;
    this.onRecords(sink, count);
    if (this.#clients.size === 0) return;
    let lines: TapLine[] | undefined;
    for (const client of this.#clients) {
      const { filter } = client;
      if (filter.sink !== undefined && filter.sink !== sink) continue;
      try {
        lines ??= batchLines(batch);
        const min = filter.level === undefined ? undefined : LEVEL_INDEX[filter.level];
        const picked = lines.filter((l) => (filter.model === undefined || l.modelId === filter.model) && (min === undefined || levelOf(l) >= min));
        if (picked.length > 0 && !client.send({ sink, lines: picked.map((l) => l.line).join(''), dropped: client.dropped })) client.dropped += picked.length;
      } catch {
        // Whatever goes wrong in showing a batch must not reach its delivery: the client is told it lost it.
        client.dropped += count;
      }
    }
  }

  /**
   * The control channel's `tap`: copies records to `send` until `signal` fires (the client
   * went away, or the daemon stops), then answers how many records the client lost.
   * @throws UsageError when `args` is not a filter.
   */
  async serve(args: unknown, send: TapSend, signal: AbortSignal): Promise<{ dropped: number }> {
    const parsed = filterSchema.safeParse(args ?? {}, { error: configErrorMap });
    if (!parsed.success) throw new UsageError(`tap refused: ${issuesToProblems(parsed.error.issues).map(formatProblem).join('; ')}`);
    const client: TapClient = { filter: parsed.data, send, dropped: 0 };
    this.#clients.add(client);
    try {
      if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    } finally {
      this.#clients.delete(client);
    }
    return { dropped: client.dropped };
  }
}

function batchLines(batch: SinkBatch): TapLine[] {
  const chunks = batch.ndjson;
  if (chunks === undefined) return batch.entries.map((e) => ({ modelId: e.modelId, line: entryToNdjson(e) }));
  return chunks.flatMap((c) => c.bytes.toString('utf8').split(/(?<=\n)/).filter((line) => line !== '').map((line) => ({ modelId: c.modelId, line })));
}

function levelOf(l: TapLine): number {
  l.level ??= LEVEL_INDEX[(JSON.parse(l.line) as { level?: keyof typeof LEVEL_INDEX }).level!] ?? -1;
  return l.level;
}
