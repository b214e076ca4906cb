//! What went wrong on the connection to the service, in words a user can act on: from the
//! codes of Node's sockets, of TLS and of the HTTP/1.1 pool (`MLS_HTTP_*`).
import { ApiError } from './errors.js';

/** The code of an error: an {@link ApiError}'s, else Node's or the pool's `code`, else `UNKNOWN`. */
export function errorCode(err: unknown): string {
  if (err instanceof ApiError) return err.code;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'UNKNOWN';
}

/** Says in words what went wrong on the connection, from the pool's and Node's error codes. */
export function describeTransportError(err: unknown): string {
  const code = errorCode(err);
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'MLS_HTTP_CLOSED':
      return 'connection closed by the other side';
    case 'MLS_HTTP_CONNECT_TIMEOUT':
      return 'timed out connecting';
    case 'MLS_HTTP_HEADERS_TIMEOUT':
      return 'timed out waiting for the response';
    case 'MLS_HTTP_BODY_TIMEOUT':
      return 'timed out receiving the response body';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host name not found';
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'CERT_UNTRUSTED':
      return `the service's TLS certificate is not signed by a trusted CA (${code}); if a private CA signed it, set api.ca_file to that CA's PEM file`;
    case 'CERT_HAS_EXPIRED':
    case 'CERT_NOT_YET_VALID':
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
    case 'CERT_SIGNATURE_FAILURE':
    case 'CERT_REVOKED': {
      const message = err instanceof Error ? err.message : String(err);
      return `the service's TLS certificate was refused: ${message} (${code})`;
    }
    default: {
      const message = err instanceof Error ? err.message : String(err);
      return code === 'UNKNOWN' ? message : `${message} (${code})`;
    }
  }
}
