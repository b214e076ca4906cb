//! What a reload compares: the sections that only a restart applies, and whether a sink's
//! settings changed (a changed sink is stopped and started again with the new ones).
import type { Config, SinkConfig } from '../config/index.js';

/**
 * The sections of `next` that differ from `prev` but take effect only at a restart: `api`
 * (except `max_response_bytes`, applied at once), `state` and `poll`.
 */
export function restartSections(prev: Config, next: Config): Array<'api' | 'state' | 'poll'> {
  const api = { ...prev.api, max_response_bytes: next.api.max_response_bytes };
  return (['api', 'state', 'poll'] as const).filter((k) => JSON.stringify(k === 'api' ? api : prev[k]) !== JSON.stringify(next[k]));
}

/** Whether a running sink's settings are the same in the new config. */
export function sinkUnchanged(running: SinkConfig, wanted: SinkConfig): boolean {
  return JSON.stringify(wanted) === JSON.stringify(running);
}
