//! Maps a failed OTLP export to a delivery outcome: retry what may succeed later, reject
//! what the receiver will never accept.
//!
//! HTTP: the exporter reports a non-2xx answer as an `OTLPExporterError` whose `code` is the
//! status. As for every network sink (net/http-client.ts), 408, 429, 5xx and a proxy's 407
//! are retried and any other 4xx (400, 401, 403, 404, 413, …) is rejected; anything else (a
//! redirect, which the exporter does not follow) is retried.
//! Network errors and time-outs carry no status and are retried. Note that the
//! 0.301 HTTP exporters already retry 429/502/503/504 and network errors by themselves
//! (up to 5 times, honouring `Retry-After`, but only while the export's `timeout` lasts),
//! and then report a bare "retryable status" error without the status or `Retry-After`;
//! such an error is retried here too.
//!
//! gRPC (grpc-exporter.ts) does not retry. The status code decides, as in the OTLP
//! specification, except that INTERNAL and UNKNOWN are retried (as HTTP 500 is): a
//! receiver's transient fault must not dead-letter data. A `google.rpc.RetryInfo` in the
//! status details gives the delay.
import type { SendOutcome } from '../contract.js';
import { describeError } from '../../errors.js';
import { clipExcerpt } from '../../net/excerpt.js';
import { answerOutcome } from '../../net/http-client.js';
import { scrubSecrets } from '../../telemetry/secrets.js';

/** gRPC status codes that mean the request can never succeed as sent. */
const GRPC_REJECT = new Map<number, string>([
  [3, 'INVALID_ARGUMENT'],
  [5, 'NOT_FOUND'],
  [6, 'ALREADY_EXISTS'],
  [7, 'PERMISSION_DENIED'],
  [9, 'FAILED_PRECONDITION'],
  [12, 'UNIMPLEMENTED'],
  [16, 'UNAUTHENTICATED'],
]);

const MAX_DETAIL = 300;

function clip(text: string): string {
  return clipExcerpt(text, MAX_DETAIL);
}

/** The outcome of a failed export over HTTP (`error` is what the exporter reported). */
export function httpFailure(error: unknown): SendOutcome {
  const status = (error as { code?: unknown } | null)?.code;
  if (typeof status === 'number' && Number.isInteger(status) && status >= 100) {
    const body = (error as { data?: unknown }).data;
    const message = (error as { message?: unknown }).message;
    const text = scrubSecrets(`HTTP ${status}${typeof message === 'string' && message ? ` ${message}` : ''}${typeof body === 'string' && body.trim() ? `: ${clip(body)}` : ''}`);
    // a redirect, which the exporter does not follow, may be a receiver moving: retried
    return status < 400 ? { status: 'retry', error: text } : answerOutcome(status, undefined, text, 0, 0);
  }
  return { status: 'retry', error: scrubSecrets(describeError(error ?? 'export failed')) };
}

/** The outcome of a failed export over gRPC. */
export function grpcFailure(error: unknown): SendOutcome {
  const code = (error as { code?: unknown } | null)?.code;
  const message = scrubSecrets(describeError(error ?? 'export failed'));
  if (typeof code !== 'number') return { status: 'retry', error: message };
  const rejected = GRPC_REJECT.get(code);
  if (rejected) return { status: 'reject', error: message };
  const afterMs = retryInfoDelayMs(statusDetails(error));
  return afterMs === undefined ? { status: 'retry', error: message } : { status: 'retry', afterMs, error: message };
}

function statusDetails(error: unknown): Uint8Array | undefined {
  const metadata = (error as { metadata?: { get?: (key: string) => unknown[] } } | null)?.metadata;
  const values = typeof metadata?.get === 'function' ? metadata.get('grpc-status-details-bin') : [];
  const first = values[0];
  return first instanceof Uint8Array ? first : undefined;
}

const RETRY_INFO_TYPE = 'type.googleapis.com/google.rpc.RetryInfo';

/**
 * Reads the delay of a `google.rpc.RetryInfo` inside a serialized `google.rpc.Status`
 * (`details` = field 3, each an `Any` of `type_url` = 1 and `value` = 2; RetryInfo's
 * `retry_delay` = 1 is a Duration of `seconds` = 1 and `nanos` = 2).
 */
export function retryInfoDelayMs(status: Uint8Array | undefined): number | undefined {
  if (!status) return undefined;
  try {
    for (const [field, any] of fields(status)) {
      if (field !== 3 || !(any instanceof Uint8Array)) continue;
      let typeUrl = '';
      let value: Uint8Array | undefined;
      for (const [f, v] of fields(any)) {
        if (f === 1 && v instanceof Uint8Array) typeUrl = new TextDecoder().decode(v);
        if (f === 2 && v instanceof Uint8Array) value = v;
      }
      if (typeUrl !== RETRY_INFO_TYPE || !value) continue;
      for (const [f, duration] of fields(value)) {
        if (f !== 1 || !(duration instanceof Uint8Array)) continue;
        let seconds = 0;
        let nanos = 0;
        for (const [g, n] of fields(duration)) {
          if (g === 1 && typeof n === 'number') seconds = n;
          if (g === 2 && typeof n === 'number') nanos = n;
        }
        return Math.max(0, Math.round(seconds * 1000 + nanos / 1e6));
      }
    }
  } catch {
    // Malformed details: fall back to the delivery loop's backoff.
  }
  return undefined;
}

/** The top-level fields of a protobuf message: varints as numbers, length-delimited as bytes. */
function* fields(buf: Uint8Array): Generator<[number, number | Uint8Array]> {
  let pos = 0;
  const varint = (): number => {
    let result = 0;
    let scale = 1;
    for (;;) {
      if (pos >= buf.length) throw new Error('truncated varint');
      const byte = buf[pos++]!;
      result += (byte & 0x7f) * scale;
      if (byte < 0x80) return result;
      scale *= 128;
    }
  };
  while (pos < buf.length) {
    const tag = varint();
    const field = Math.floor(tag / 8);
    switch (tag & 7) {
      case 0:
        yield [field, varint()];
        break;
      case 1:
        pos += 8;
        break;
      case 2: {
        const len = varint();
        if (pos + len > buf.length) throw new Error('truncated field');
        yield [field, buf.subarray(pos, pos + len)];
        pos += len;
        break;
      }
      case 5:
        pos += 4;
        break;
      default:
        throw new Error('unsupported wire type');
    }
  }
}
