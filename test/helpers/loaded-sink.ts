//! A sink block as the daemon gets it: parsed by the config loader, which also registers the
//! block's secrets for scrubbing (a sink does not register them itself).
import { parseConfig } from '../../src/cli/config.js';

/** `block` parsed as the only sink of a minimal config. */
export function loadedSinkBlock<T>(block: Record<string, unknown>): T {
  const config = parseConfig({ api: { base_url: 'https://api.example.com', token: 'test-token' }, models: [{ id: 'model-a' }], sinks: [block] }, { env: {} });
  return config.sinks[0] as T;
}
