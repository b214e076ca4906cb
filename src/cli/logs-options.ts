//! The options of `mls logs`, shared by its definition (logs.ts) and what runs it (logs-run.ts).
import type { ApiCliOptions } from './common.js';

/** Options of `mls logs` as commander parses them. */
export interface LogsCliOptions extends ApiCliOptions {
  model: string;
  since?: string;
  from?: string;
  to?: string;
  follow?: boolean;
  interval?: string;
  output?: string;
  lessLogs?: boolean;
  process?: boolean;
}

/** The window printed when neither --since nor --from is given. */
export const DEFAULT_SINCE = '15m';
/** Time between polls when following. */
export const DEFAULT_INTERVAL = '2s';
