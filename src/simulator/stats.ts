//! Counters of what the simulator answered, read by tests and benchmarks.
import { FAULT_KINDS } from './faults.js';

/** Counters of what the simulator answered. */
export interface SimulatorStats {
  requests: number;
  logsRequests: number;
  /** Logs requests that asked for fewer logs (`is_less_logs: true`) and were answered. */
  lessLogsRequests: number;
  settingsRequests: number;
  /** Entries sent in complete, successful pages. */
  entriesServed: number;
  /** Successful logs answers per model id. */
  logsAnswersByModel: Record<string, number>;
  /**
   * Per model (absent: none), traceback episodes of python content every line of which has
   * been sent in complete, successful pages, each counted once, when its last line not yet
   * sent is (its lines may come in different pages or windows). An episode counted before
   * {@link Simulator.resetStats} is not counted again.
   */
  tracebacksServed: Record<string, number>;
  faultsInjected: Record<string, number>;
  /** Answers per HTTP status (as a string). */
  byStatus: Record<string, number>;
  /** When the first logs request since the start (or the last {@link Simulator.resetStats}) arrived, epoch ms. */
  firstLogsRequestMs: number | undefined;
}

/** Counters at zero. */
export function emptyStats(): SimulatorStats {
  return {
    requests: 0,
    logsRequests: 0,
    lessLogsRequests: 0,
    settingsRequests: 0,
    entriesServed: 0,
    logsAnswersByModel: {},
    tracebacksServed: {},
    faultsInjected: Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])),
    byStatus: {},
    firstLogsRequestMs: undefined,
  };
}
