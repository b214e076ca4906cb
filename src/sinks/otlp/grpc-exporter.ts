//! The OTLP exporter over gRPC: the official export delegate and serializer, over a grpc-js
//! channel made here, because the official exporter passes no channel options and a proxy is
//! set through them. grpc-js's own reading of the environment is turned off; the proxy comes
//! from net/proxy.ts, like every other path's, and goes through an HTTP CONNECT tunnel.
import { Client, Metadata, type ChannelCredentials, type ChannelOptions } from '@grpc/grpc-js';
import { OTLPExporterBase, createOtlpNetworkExportDelegate, type ExportResponse, type IExporterTransport } from '@opentelemetry/otlp-exporter-base';
import { createOtlpGrpcExporterMetrics } from '@opentelemetry/otlp-grpc-exporter-base';
import { LogsExporterMetricsHelper, ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer';
import type { LogRecordExporter, ReadableLogRecord } from '@opentelemetry/sdk-logs';

const EXPORT_METHOD = '/opentelemetry.proto.collector.logs.v1.LogsService/Export';
const GRPC_GZIP = 2;
const passThrough = (bytes: Buffer): Buffer => bytes;

/** What the gRPC exporter is made of. */
export interface GrpcExporterOptions {
  /** `host:port` of the receiver. */
  target: string;
  /** An http:// proxy (net/proxy.ts), or none. */
  proxy: URL | undefined;
  credentials: ChannelCredentials;
  metadata: Metadata;
  compression: 'gzip' | 'none';
  timeoutMillis: number;
  concurrencyLimit: number;
}

/** The export requests of one channel, opened with the first. */
class GrpcTransport implements IExporterTransport {
  #client: Client | undefined;

  constructor(private readonly options: GrpcExporterOptions) {}

  /** The channel, made on first use. */
  private client(): Client {
    if (!this.#client) {
      const { target, proxy } = this.options;
      const channel: ChannelOptions = {
        'grpc.enable_http_proxy': 0,
        'grpc.default_compression_algorithm': this.options.compression === 'gzip' ? GRPC_GZIP : 0,
        'grpc.primary_user_agent': 'model-log-shipper',
      };
      let address = target;
      if (proxy) {
        // the channel connects to the proxy and asks it for a tunnel to the receiver, whose name the TLS handshake and `:authority` keep
        address = `${proxy.hostname}:${proxy.port || 80}`;
        Object.assign(channel, { 'grpc.http_connect_target': `dns:${target}`, 'grpc.default_authority': target });
        if (proxy.username) channel['grpc.http_connect_creds'] = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
      }
      this.#client = new Client(address, this.options.credentials, channel);
    }
    return this.#client;
  }

  send(data: Uint8Array, timeoutMillis: number): Promise<ExportResponse> {
    return new Promise((resolve) => {
      const deadline = Date.now() + timeoutMillis;
      this.client().makeUnaryRequest(EXPORT_METHOD, passThrough, passThrough, Buffer.from(data), this.options.metadata, { deadline }, (error, response) => {
        resolve(error ? { status: 'failure', error } : { status: 'success', ...(response ? { data: response } : {}) });
      });
    });
  }

  shutdown(): void {
    this.#client?.close();
  }
}

/** Creates the gRPC exporter. */
export function createGrpcExporter(options: GrpcExporterOptions): LogRecordExporter {
  const metrics = createOtlpGrpcExporterMetrics('otlp_grpc_log_exporter', LogsExporterMetricsHelper, options.target, undefined);
  return new OTLPExporterBase<ReadableLogRecord[]>(createOtlpNetworkExportDelegate(options, ProtobufLogsSerializer, metrics, new GrpcTransport(options)));
}
