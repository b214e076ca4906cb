//! Builds the OTLP log exporter for the configured protocol: the target URL, headers or gRPC
//! metadata, compression, time-out, TLS material (net/dispatcher.ts) and proxy (net/proxy.ts).
//! Over HTTP, the official exporters send through an agent that tunnels to the proxy with
//! CONNECT (https targets) or forwards to it (http ones); over gRPC, see grpc-exporter.ts.
import { credentials, Metadata, type ChannelCredentials } from '@grpc/grpc-js';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base';
import type { LogRecordExporter } from '@opentelemetry/sdk-logs';
import type { OtlpSinkConfig } from './config.js';
import { ConfigError } from '../../errors.js';
import { readTls, type TlsOptions } from '../../net/dispatcher.js';
import { proxyFor, proxyLabel } from '../../net/proxy.js';
import { createGrpcExporter } from './grpc-exporter.js';

/** Default endpoint of OTLP over HTTP. */
export const DEFAULT_HTTP_ENDPOINT = 'http://localhost:4318';
/** Default endpoint of OTLP over gRPC. */
export const DEFAULT_GRPC_ENDPOINT = 'http://localhost:4317';
const LOGS_PATH = '/v1/logs';
/** Most exports in flight at once; the delivery loop sends one batch at a time. */
const CONCURRENCY_LIMIT = 4;

/** The part of the sink config the exporter depends on. */
export type ExporterConfig = Pick<OtlpSinkConfig, 'protocol' | 'headers' | 'compression' | 'timeout' | 'tls' | 'proxy'> & {
  endpoint?: string | undefined;
};

/** Where the exporter sends: the full URL for HTTP, the `http(s)://host:port` target for gRPC. */
export function exportTarget(config: Pick<ExporterConfig, 'protocol' | 'endpoint'>): string {
  const grpc = config.protocol === 'grpc';
  const base = (config.endpoint?.trim() || (grpc ? DEFAULT_GRPC_ENDPOINT : DEFAULT_HTTP_ENDPOINT)).replace(/\/+$/, '');
  if (grpc) return base;
  return base.endsWith(LOGS_PATH) ? base : `${base}${LOGS_PATH}`;
}

function grpcCredentials(target: string, tls: TlsOptions): ChannelCredentials {
  if (target.startsWith('http://')) return credentials.createInsecure();
  const roots = tls.ca ? Buffer.from(tls.ca.join('\n')) : null;
  return credentials.createSsl(roots, tls.key ?? null, tls.cert ?? null, tls.rejectUnauthorized === false ? { rejectUnauthorized: false } : {});
}

/** An exporter, and the proxy it goes through (or none). */
export interface Exporter {
  exporter: LogRecordExporter;
  proxy: URL | undefined;
}

/**
 * Creates the exporter. None of the three is wrapped in a LoggerProvider or batch
 * processor: the sink hands each journal batch to `export()` itself.
 * @throws ConfigError for a TLS file that cannot be read, or a proxy gRPC cannot use.
 */
export function createExporter(config: ExporterConfig, sinkName: string): Exporter {
  const target = exportTarget(config);
  const setting = `sinks.${sinkName}.`;
  const tls = readTls({ setting: `${setting}tls.`, caFile: config.tls?.ca_file, certFile: config.tls?.cert_file, keyFile: config.tls?.key_file, insecure: config.tls?.insecure });
  const proxy = proxyFor(new URL(target), config.proxy, `${setting}proxy`);
  const compression = config.compression === 'gzip' ? CompressionAlgorithm.GZIP : CompressionAlgorithm.NONE;
  const common = { timeoutMillis: config.timeout, concurrencyLimit: CONCURRENCY_LIMIT };
  if (config.protocol === 'grpc') {
    if (proxy?.protocol === 'https:') {
      const from = config.proxy === undefined ? ' (from the environment)' : '';
      const problem = `${setting}proxy: gRPC reaches a proxy over plain HTTP only, and ${proxyLabel(proxy)}${from} is an https:// one; set an http:// proxy, or none`;
      throw new ConfigError(problem, [problem]);
    }
    const metadata = new Metadata();
    for (const [k, v] of Object.entries(config.headers)) metadata.set(k.toLowerCase(), v);
    const url = new URL(target);
    const exporter = createGrpcExporter({ ...common, target: url.host, proxy, credentials: grpcCredentials(target, tls), metadata, compression: config.compression });
    return { exporter, proxy };
  }
  const agentOptions = { keepAlive: true, ...tls };
  const httpAgentOptions = proxy
    ? async () => (target.startsWith('https:') ? new (await import('https-proxy-agent')).HttpsProxyAgent(proxy, agentOptions) : new (await import('http-proxy-agent')).HttpProxyAgent(proxy, agentOptions))
    : agentOptions;
  const options = { ...common, url: target, compression, headers: { ...config.headers }, httpAgentOptions };
  const exporter = config.protocol === 'http/json' ? new JsonLogExporter(options) : new ProtoLogExporter(options);
  return { exporter, proxy };
}
