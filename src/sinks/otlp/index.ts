//! The OTLP sink: each journal batch becomes one export request of the official
//! OpenTelemetry log exporter (http/protobuf, http/json or gRPC), answered `ok` only once
//! the receiver accepted it. Records carry the entry's time exact to the nanosecond, the
//! stream as `log.iostream` and the model id, and what processing found (level, message,
//! JSON fields, trace context; see `records.ts`); each model gets its own resource.
//!
//! Retries belong to the delivery loop. The gRPC exporter never retries; the HTTP
//! exporters retry 429/502/503/504 and network errors internally, but only within the
//! export `timeout`, so one `send` lasts about `timeout` at most (see `outcome.ts`). The
//! exporters are never put behind a LoggerProvider or batch processor, which drop records
//! when their queue is full.
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { LogRecordExporter } from '@opentelemetry/sdk-logs';
import type { OtlpSinkConfig } from './config.js';
import { describeError } from '../../errors.js';
import { probeTcp } from '../../net/probe.js';
import { proxyLabel } from '../../net/proxy.js';
import type { SendOutcome, Sink, SinkBatch, SinkContext } from '../contract.js';
import { createExporter, exportTarget, type ExporterConfig } from './exporter.js';
import { grpcFailure, httpFailure } from './outcome.js';
import { RecordMapper } from './records.js';

export { ATTR_LOG_IOSTREAM, ATTR_MODEL_ID, ATTR_RECORD_LINES, ATTR_RECORD_TIME_END, ATTR_SERVICE_NAME, msToHrTime, nsToHrTime } from './records.js';
export { anyValue, validSpanId, validTraceId } from './attributes.js';
export { DEFAULT_GRPC_ENDPOINT, DEFAULT_HTTP_ENDPOINT, exportTarget } from './exporter.js';
export { grpcFailure, httpFailure, retryInfoDelayMs } from './outcome.js';

/** What the OTLP sink takes besides its config block. */
export interface OtlpSinkOptions {
  /**
   * Resource attributes per model id (the models' `resource` blocks), applied over the
   * sink's `resource`; `service.name` defaults to the model id.
   */
  modelResources?: ReadonlyMap<string, Readonly<Record<string, string>>>;
}

/** The sink's config block; `endpoint` falls back to the protocol's default port on localhost. */
export type OtlpSinkSettings = Omit<OtlpSinkConfig, 'endpoint'> & { endpoint?: string | undefined };

const HEALTHCHECK_TIMEOUT_MS = 3_000;

/** Builds an OTLP sink. Throws a `ConfigError` when a TLS file cannot be read or the proxy is unusable. */
export async function createOtlpSink(config: OtlpSinkSettings, ctx: SinkContext, options: OtlpSinkOptions = {}): Promise<Sink> {
  const exporterConfig: ExporterConfig = config;
  const { exporter, proxy } = createExporter(exporterConfig, ctx.name);
  const mapper = new RecordMapper({
    resource: config.resource,
    ...(options.modelResources ? { modelResources: options.modelResources } : {}),
    ...(config.severity ? { severity: config.severity } : {}),
  });
  const target = exportTarget(config);
  const classify = config.protocol === 'grpc' ? grpcFailure : httpFailure;
  ctx.logger.debug({ sink: ctx.name, protocol: config.protocol, endpoint: target, compression: config.compression, proxy: proxy && proxyLabel(proxy) }, 'OTLP sink ready');
  return new OtlpSink(exporter, mapper, classify, new URL(target), proxy, config.protocol);
}

class OtlpSink implements Sink {
  private closing: Promise<void> | undefined;

  constructor(
    private readonly exporter: LogRecordExporter,
    private readonly mapper: RecordMapper,
    private readonly classify: (error: unknown) => SendOutcome,
    private readonly target: URL,
    private readonly proxy: URL | undefined,
    private readonly protocol: OtlpSinkConfig['protocol'],
  ) {}

  async healthcheck(): Promise<{ ok: boolean; detail?: string }> {
    // A TCP connect to where the exports go first (the proxy, if any): nothing is sent.
    const { ok, detail } = await probeTcp(this.proxy ?? this.target, HEALTHCHECK_TIMEOUT_MS);
    return { ok, detail: `${this.protocol} receiver ${this.proxy ? `through the proxy ${detail}` : detail}` };
  }

  send(batch: SinkBatch, signal: AbortSignal): Promise<SendOutcome> {
    if (this.closing) return Promise.resolve({ status: 'retry', error: 'the OTLP sink is closed' });
    if (signal.aborted) return Promise.resolve({ status: 'retry', error: 'stopping before the export' });
    if (batch.entries.length === 0) return Promise.resolve({ status: 'ok' });
    const records = this.mapper.toRecords(batch.entries, batch.setAside);
    if (records.length === 0) return Promise.resolve({ status: 'ok' });
    return new Promise<SendOutcome>((resolve) => {
      // An abort answers at once; the export itself runs on and close() waits for it.
      // If it then succeeds, the batch is sent again later: at least once, never lost.
      const onAbort = () => resolve({ status: 'retry', error: 'stopped while the export was in flight' });
      signal.addEventListener('abort', onAbort, { once: true });
      const finish = (outcome: SendOutcome) => {
        signal.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      try {
        this.exporter.export(records, (result: ExportResult) => {
          finish(result.code === ExportResultCode.SUCCESS ? { status: 'ok' } : this.classify(result.error));
        });
      } catch (err) {
        finish({ status: 'retry', error: `export failed: ${describeError(err)}` });
      }
    });
  }

  flush(): Promise<void> {
    return this.exporter.forceFlush();
  }

  close(): Promise<void> {
    this.closing ??= this.exporter.shutdown();
    return this.closing;
  }
}
