//! A sink's processing stage as its delivery loop starts: the open groups committed with its
//! cursor reopened from the journal. Lines of those groups that `when_full: drop_oldest`
//! dropped from the journal are lost here, and counted as dropped: while the daemon runs, an
//! open group keeps its lines and delivers them when it closes.
import type { PageSlice } from '../../journal/pages.js';
import type { SinkLogger } from '../../sinks/contract.js';
import { ProcessingStage, type StageOptions } from './stage.js';

/** What {@link openStage} needs. */
export interface OpenStage extends StageOptions {
  logger: SinkLogger;
  /** The models the sink gets (all when undefined). */
  models: ReadonlySet<string> | undefined;
  /** The open groups committed with the cursor. */
  held: string | undefined;
  readRange(firstSeq: number, lastSeq: number): PageSlice[];
  /** Counts lines lost before delivery (`mls_sink_dropped_total`). */
  dropped(lines: number): void;
}

/** The sink's processing stage, its committed open groups reopened. */
export function openStage(o: OpenStage): ProcessingStage {
  const { models, progress, logger, sink } = o;
  const stage = new ProcessingStage({
    ...o,
    // A model this sink no longer gets has stopped moving for it.
    progress: models === undefined ? progress : { ...progress, stopped: (m) => !models.has(m) || progress.stopped(m) },
  });
  let missing = 0;
  try {
    missing = stage.restore(o.held, o.readRange);
  } catch (err) {
    logger.error({ err, sink }, 'could not read the open multiline groups committed with the cursor; their lines before the cursor are not delivered');
  }
  if (missing > 0) {
    o.dropped(missing);
    logger.error({ sink, dropped: missing }, 'lines of open multiline groups were dropped from the journal (buffer.when_full: drop_oldest) before their record was delivered');
  }
  return stage;
}
