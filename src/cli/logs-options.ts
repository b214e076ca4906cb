//! The options of `mls logs`, shared by its definition (logs.ts) and what runs it (logs-run.ts).
import type { ApiClientOptions } from '../api/client-options.js';
import type { ApiClient } from '../api/types.js';
import type { Clock } from '../time/clock.js';
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

/** What `mls logs` depends on besides its streams; tests replace parts. */
export interface LogsDeps {
  createClient?: (options: ApiClientOptions) => ApiClient;
  clock?: Clock;
}

/** The window printed when neither --since nor --from is given. */
export const DEFAULT_SINCE = '15m';
/** Time between polls when following. */
export const DEFAULT_INTERVAL = '2s';
