//! The scene of the end-to-end tests that ship fixed lines to every kind of sink: a service
//! answering each model's entries by window, a webhook receiver and an OTLP/HTTP receiver, in
//! a temp folder; the service settings that read them in seconds; and the check that every
//! sink has delivered every line.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { entriesIn, page, startHostileService, type HostileService, type WireEntry } from './hostile-service.js';
import { startWebhookReceiver, type WebhookReceiver } from './receivers.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';
import { readState } from '../e2e/harness.js';

/** What {@link startScene} starts. */
export interface Scene {
  dir: string;
  service: HostileService;
  hook: WebhookReceiver;
  otlp: OtlpReceiver;
  close(): Promise<void>;
}

/** Starts the service (answering `entries` of each model by window) and both receivers, in a temp folder named `prefix…`. */
export async function startScene(prefix: string, entries: Readonly<Record<string, readonly WireEntry[]>>): Promise<Scene> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const [service, hook, otlp] = await Promise.all([
    startHostileService((call) => ({ body: page(entriesIn(entries[call.modelId] ?? [], call)) })),
    startWebhookReceiver(),
    startOtlpReceiver({ protocol: 'http' }),
  ]);
  return {
    dir,
    service,
    hook,
    otlp,
    async close() {
      await Promise.all([service.close(), hook.close(), otlp.close()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `api`, `state` and `poll` of a config that reads the scene's service in seconds: fast retries, short windows, one early re-read, from 40 s ago. */
export function quickService(serviceUrl: string, statePath: string) {
  return {
    api: { base_url: serviceUrl, token: '${MLS_API_TOKEN}', retry: { deadline: '2s', base_delay: '20ms', max_delay: '200ms' } },
    state: { path: statePath },
    poll: { interval: '300ms', lookback: '2s', settle: '100ms', start_at: '-40s', max_window: '30s', rate_limit: 'none', reread: { ages: ['1s'] } },
  };
}

/** Whether the journal at `statePath` holds `total` entries and every sink has delivered them all. */
export function deliveredAll(statePath: string, total: number): () => boolean {
  return () => {
    const st = readState(statePath);
    return st !== undefined && st.lastSeq === total && [...st.cursors.values()].every((c) => c === st.lastSeq);
  };
}
