//! The embedded simulator of the model-management service, used by `mls demo`,
//! `mls simulate`, the tests and the benchmarks.
export { startSimulator, LOGS_PATH, SETTINGS_PATH } from './server.js';
export type { Simulator } from './server.js';
export type { SimulatorOptions, EndStyle, ContentProfile } from './options.js';
export type { TracebackEpisode } from './store.js';
export type { SimulatorStats } from './stats.js';
export type { SettingsCall, SettingsFailure, SettingsUpdate } from './settings-endpoint.js';
export { NO_FAULTS, FAULT_KINDS, spreadFaultRate } from './faults.js';
export type { FaultRates, FaultKind } from './faults.js';
