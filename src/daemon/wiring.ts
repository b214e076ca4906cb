//! From the validated config to the settings of the parts the daemon runs: the api client,
//! each model's poller, each sink's delivery loop. Pure mappings: units are already parsed
//! (milliseconds, bytes), so each is a renaming, never a computation.
import type { Logger } from 'pino';
import type { Config, ModelConfig, SinkConfig } from '../config/index.js';
import type { ApiClientOptions } from '../api/client-options.js';
import type { ModelPollerSettings } from '../poller/model-poller.js';
import type { DeliverySettings } from '../delivery/sink-delivery.js';
import type { Metrics } from '../telemetry/metrics.js';
import { sinkRegistry } from '../sinks/registry.js';

/** The api client of `config`, reporting each attempt and retry to `metrics`. */
export function clientOptions(config: Config, metrics: Metrics, logger: Logger): ApiClientOptions {
  const { api } = config;
  return {
    baseUrl: api.base_url,
    token: api.token,
    authScheme: api.auth_scheme,
    timeouts: { connectMs: api.timeouts.connect, headersMs: api.timeouts.headers, bodyMs: api.timeouts.body },
    retry: { deadlineMs: api.retry.deadline, baseDelayMs: api.retry.base_delay, maxDelayMs: api.retry.max_delay },
    maxResponseBytes: api.max_response_bytes,
    caFile: api.ca_file,
    insecureSkipVerify: api.insecure_skip_verify,
    proxy: api.proxy,
    connections: config.poll.concurrency,
    logger,
    observer: {
      onAttempt: (a) => metrics.apiAttempt(a.operation, a.status, a.latencyMs),
      onRetry: (r) => metrics.apiRetries.inc({ model: r.modelId }),
    },
  };
}

/** The start setting of model `m`: its own `start_at`, else `poll.start_at`. */
export function modelStartAt(config: Config, m: ModelConfig): Config['poll']['start_at'] {
  return m.start_at ?? config.poll.start_at;
}

/** The settle of `settle: auto` until a model's entries were seen: the fixed default of earlier versions. */
export const AUTO_SETTLE_FALLBACK_MS = 2_000;

/** `poll.min_interval`: as configured, else 1 s, never above `poll.interval`. */
export function minIntervalMs(config: Config): number {
  return Math.min(config.poll.min_interval ?? 1_000, config.poll.interval);
}

/** The settings of model `m`'s poller. */
function pollerSettings(config: Config, m: ModelConfig, pruneEveryMs: number | undefined): ModelPollerSettings {
  const { poll } = config;
  return {
    intervalMs: poll.interval,
    jitter: poll.jitter,
    lookbackMs: poll.lookback,
    settleMs: poll.settle === 'auto' ? AUTO_SETTLE_FALLBACK_MS : poll.settle,
    settle: poll.settle,
    minIntervalMs: minIntervalMs(config),
    maxWindowMs: poll.max_window,
    reread: poll.reread.mode === 'sparse' ? { mode: 'sparse', agesMs: poll.reread.ages } : { mode: 'sliding' },
    startAt: modelStartAt(config, m),
    isLessLogs: m.is_less_logs,
    authRetryMs: poll.auth_retry,
    pruneEveryMs,
    windowLimits: { maxPages: poll.window_limits.max_pages, maxDurationMs: poll.window_limits.max_duration },
  };
}

/**
 * {@link pollerSettings} for the models of `config`: one object for all the models whose own
 * settings (`start_at`, `is_less_logs`) are the same, as pollers only read it (10,000 models,
 * a few objects).
 */
export function pollerSettingsOf(config: Config, pruneEveryMs: number | undefined): (m: ModelConfig) => ModelPollerSettings {
  const made = new Map<string, ModelPollerSettings>();
  return (m) => {
    const key = JSON.stringify([modelStartAt(config, m), m.is_less_logs ?? null]);
    let s = made.get(key);
    if (s === undefined) {
      s = pollerSettings(config, m, pruneEveryMs);
      made.set(key, s);
    }
    return s;
  };
}

/** The batching and retry settings of sink `sc`'s delivery loop. */
export function deliverySettings(sc: SinkConfig): DeliverySettings {
  return {
    maxEntries: sc.batch.max_entries,
    maxBytes: sc.batch.max_bytes,
    maxDelayMs: sc.batch.max_delay,
    retryBaseMs: sc.retry.base_delay,
    retryMaxMs: sc.retry.max_delay,
    models: sc.models ? new Set(sc.models) : undefined,
    concurrency: sinkRegistry.deliveryConcurrency(sc),
    sendTimeoutMs: sinkRegistry.sendTimeoutMs(sc),
  };
}
