//! The transport's own failures, each with a stable `code` (the client turns codes into
//! words, and metrics count them by code).

/** Codes of {@link TransportError}. */
export type TransportErrorCode =
  | 'MLS_HTTP_CONNECT_TIMEOUT'
  | 'MLS_HTTP_HEADERS_TIMEOUT'
  | 'MLS_HTTP_BODY_TIMEOUT'
  | 'MLS_HTTP_CLOSED'
  | 'MLS_HTTP_BAD_RESPONSE'
  | 'MLS_HTTP_POOL_CLOSED';

/** A connection-level failure of one exchange: no response, or a response cut short. */
export class TransportError extends Error {
  constructor(
    readonly code: TransportErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}

/** The answer broke HTTP/1.1's framing: the connection cannot be trusted any further. */
export function badResponse(what: string): TransportError {
  return new TransportError('MLS_HTTP_BAD_RESPONSE', `the response is not valid HTTP/1.1: ${what}`);
}
