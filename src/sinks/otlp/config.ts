//! The OTLP sink's config block, and the `resource` key it adds to every model.
import { z } from 'zod';
import { duration, filePath, httpUrl, proxyUrl, scalar, secretHeaders, sinkFields, stringMap, REQUEST_BATCHES, SINK_CREDENTIALS, type RawProblem } from '../../config/index.js';

const SEVERITIES = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'] as const;
/** OTLP severity texts. */
export type SeverityText = (typeof SEVERITIES)[number];

/** The schema of a `type: otlp` block. */
export const otlpSinkSchema = z
  .strictObject({
    type: z.literal('otlp').describe('Exports OpenTelemetry log records.'),
    ...sinkFields(REQUEST_BATCHES),
    endpoint: httpUrl(
      'Base URL of the OTLP receiver; default http://localhost:4318 for HTTP and http://localhost:4317 for gRPC. /v1/logs is appended for HTTP unless already there.',
      { stripSlash: true, credentials: SINK_CREDENTIALS },
    ).optional(),
    protocol: z.enum(['http/protobuf', 'http/json', 'grpc']).default('http/protobuf').describe('OTLP transport.'),
    headers: secretHeaders('Extra request headers or gRPC metadata (values are treated as secrets).').prefault({}),
    compression: z.enum(['gzip', 'none']).default('gzip').describe('Compression of the export requests.'),
    timeout: duration('Time allowed for one export.', { positive: true }).prefault('10s'),
    resource: stringMap('Resource attributes added to every record (per-model attributes take precedence).').prefault({}),
    severity: z
      .record(z.string().min(1), z.enum(SEVERITIES))
      .optional()
      .describe('Severity text per stream, e.g. {stderr: ERROR}, for records without a detected level; streams not listed carry no severity.'),
    tls: z
      .strictObject({
        ca_file: filePath("PEM file of extra certificate authorities to trust, besides Node's default ones (its bundled roots and NODE_EXTRA_CA_CERTS).").optional(),
        cert_file: filePath('Client certificate (PEM) for mutual TLS; needs key_file.').optional(),
        key_file: filePath('Client private key (PEM) for mutual TLS; needs cert_file.').optional(),
        insecure: scalar(z.boolean().default(false)).describe('Do not verify the receiver certificate. Only for testing.'),
      })
      .optional()
      .describe('TLS settings of the connection to the receiver.'),
    proxy: proxyUrl(
      'Proxy for the receiver: an http:// or https:// URL, credentials allowed (treated as a secret), or `none` to connect directly. Without it, HTTP_PROXY, HTTPS_PROXY and NO_PROXY apply. gRPC goes through a CONNECT tunnel of an http:// proxy only.',
    ).optional(),
  })
  .describe('OTLP sink.');

/** A `type: otlp` sink block, parsed. */
export type OtlpSinkConfig = z.output<typeof otlpSinkSchema>;

declare module '../../config/schema.js' {
  interface SinkConfigs {
    otlp: OtlpSinkConfig;
  }
}

/** The key the OTLP sink adds to every entry of `models`. */
export const otlpModelKeys = {
  resource: stringMap('OTLP resource attributes for this model (e.g. service.name: billing-model), added to every OTLP sink.').prefault({}),
};

declare module '../../config/schema.js' {
  interface ModelKeys {
    /** OTLP resource attributes of the model (`models[].resource`). */
    resource: Record<string, string>;
  }
}

/**
 * Client certificates need both halves: a block with one of `tls.cert_file` and
 * `tls.key_file` names the other. gRPC reaches a proxy over plain HTTP only.
 */
export function checkOtlpBlock(block: Record<string, unknown>): RawProblem[] {
  if (block.protocol === 'grpc' && typeof block.proxy === 'string' && /^\s*https:/i.test(block.proxy)) {
    return [{ path: ['proxy'], message: 'is an https:// proxy, which gRPC cannot use (grpc-js reaches a proxy over plain HTTP); use an http:// proxy, or none' }];
  }
  const tls = block.tls;
  if (tls === null || typeof tls !== 'object' || Array.isArray(tls)) return [];
  const hasCert = (tls as Record<string, unknown>).cert_file !== undefined;
  const hasKey = (tls as Record<string, unknown>).key_file !== undefined;
  if (hasCert === hasKey) return [];
  return [
    {
      path: ['tls', hasCert ? 'key_file' : 'cert_file'],
      message: `is required when tls.${hasCert ? 'cert_file' : 'key_file'} is set; client certificates need both cert_file and key_file`,
    },
  ];
}
