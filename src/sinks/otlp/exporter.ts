//! Builds the official OTLP log exporter for the configured protocol: the target URL,
//! headers or gRPC metadata, compression, time-out and TLS material.
import { readFileSync } from 'node:fs';
import { credentials, Metadata, type ChannelCredentials } from '@grpc/grpc-js';
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base';
import type { LogRecordExporter } from '@opentelemetry/sdk-logs';
import type { OtlpSinkConfig } from './config.js';
import { ConfigError, describeError } from '../../errors.js';

/** Default endpoint of OTLP over HTTP. */
export const DEFAULT_HTTP_ENDPOINT = 'http://localhost:4318';
/** Default endpoint of OTLP over gRPC. */
export const DEFAULT_GRPC_ENDPOINT = 'http://localhost:4317';
const LOGS_PATH = '/v1/logs';
/** Most exports in flight at once; the delivery loop sends one batch at a time. */
const CONCURRENCY_LIMIT = 4;

/** The part of the sink config the exporter depends on. */
export type ExporterConfig = Pick<OtlpSinkConfig, 'protocol' | 'headers' | 'compression' | 'timeout' | 'tls'> & {
  endpoint?: string | undefined;
};

/** Where the exporter sends: the full URL for HTTP, the `http(s)://host:port` target for gRPC. */
export function exportTarget(config: Pick<ExporterConfig, 'protocol' | 'endpoint'>): string {
  const grpc = config.protocol === 'grpc';
  const base = (config.endpoint?.trim() || (grpc ? DEFAULT_GRPC_ENDPOINT : DEFAULT_HTTP_ENDPOINT)).replace(/\/+$/, '');
  if (grpc) return base;
  return base.endsWith(LOGS_PATH) ? base : `${base}${LOGS_PATH}`;
}

interface TlsMaterial {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  insecure: boolean;
}

function readTls(config: ExporterConfig, sinkName: string): TlsMaterial | undefined {
  const tls = config.tls;
  if (!tls) return undefined;
  const read = (key: 'ca_file' | 'cert_file' | 'key_file'): Buffer | undefined => {
    const path = tls[key];
    if (path === undefined) return undefined;
    try {
      return readFileSync(path);
    } catch (err) {
      throw new ConfigError(`sink ${sinkName}: cannot read tls.${key} ${path}: ${describeError(err)}`, [`sinks.${sinkName}.tls.${key}: cannot read ${path}`], { cause: err });
    }
  };
  if ((tls.cert_file === undefined) !== (tls.key_file === undefined)) {
    const missing = tls.cert_file === undefined ? 'cert_file' : 'key_file';
    throw new ConfigError(`sink ${sinkName}: tls.${missing} is missing; a client certificate needs both cert_file and key_file`, [
      `sinks.${sinkName}.tls.${missing}: required together with ${missing === 'cert_file' ? 'key_file' : 'cert_file'}`,
    ]);
  }
  const material: TlsMaterial = { insecure: tls.insecure };
  const ca = read('ca_file');
  const cert = read('cert_file');
  const key = read('key_file');
  if (ca) material.ca = ca;
  if (cert) material.cert = cert;
  if (key) material.key = key;
  return material;
}

function grpcCredentials(target: string, tls: TlsMaterial | undefined): ChannelCredentials | undefined {
  if (target.startsWith('http://')) return credentials.createInsecure();
  if (!tls) return undefined;
  return credentials.createSsl(tls.ca ?? null, tls.key ?? null, tls.cert ?? null, tls.insecure ? { rejectUnauthorized: false } : {});
}

/**
 * Creates the exporter. None of the three is wrapped in a LoggerProvider or batch
 * processor: the sink hands each journal batch to `export()` itself.
 */
export function createExporter(config: ExporterConfig, sinkName: string): LogRecordExporter {
  const target = exportTarget(config);
  const tls = readTls(config, sinkName);
  const compression = config.compression === 'gzip' ? CompressionAlgorithm.GZIP : CompressionAlgorithm.NONE;
  const common = { url: target, timeoutMillis: config.timeout, concurrencyLimit: CONCURRENCY_LIMIT, compression };
  if (config.protocol === 'grpc') {
    const metadata = new Metadata();
    for (const [k, v] of Object.entries(config.headers)) metadata.set(k.toLowerCase(), v);
    const creds = grpcCredentials(target, tls);
    return new GrpcLogExporter({ ...common, metadata, ...(creds ? { credentials: creds } : {}) });
  }
  const httpAgentOptions = {
    keepAlive: true,
    ...(tls?.ca ? { ca: tls.ca } : {}),
    ...(tls?.cert ? { cert: tls.cert } : {}),
    ...(tls?.key ? { key: tls.key } : {}),
    ...(tls?.insecure ? { rejectUnauthorized: false } : {}),
  };
  const options = { ...common, headers: { ...config.headers }, httpAgentOptions };
  return config.protocol === 'http/json' ? new JsonLogExporter(options) : new ProtoLogExporter(options);
}
