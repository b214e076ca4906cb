//! What went wrong on a connection, in words a user can act on: from the codes of Node's
//! sockets, of TLS and of undici (`UND_ERR_*`). Shared by the service client and the sinks.

/** The code of an error (an `MlsError`'s, Node's or undici's `code`), else `UNKNOWN`. */
export function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'UNKNOWN';
}

/** Whose certificate a TLS failure is about, and the setting that adds a CA. */
export interface TlsPeer {
  /** `the service's`, `the receiver's`. */
  whose: string;
  /** `api.ca_file`, `sinks.hook.ca_file`. */
  caSetting: string;
}

const SERVICE: TlsPeer = { whose: "the service's", caSetting: 'api.ca_file' };

const WORDS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection closed by the other side',
  EPIPE: 'connection closed by the other side',
  UND_ERR_SOCKET: 'connection closed by the other side',
  UND_ERR_CONNECT_TIMEOUT: 'timed out connecting',
  UND_ERR_HEADERS_TIMEOUT: 'timed out waiting for the response',
  UND_ERR_BODY_TIMEOUT: 'timed out receiving the response body',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name not found',
};
const UNTRUSTED = new Set(['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'CERT_UNTRUSTED']);
const REFUSED = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'ERR_TLS_CERT_ALTNAME_INVALID', 'CERT_SIGNATURE_FAILURE', 'CERT_REVOKED']);

/** Says in words what went wrong on the connection, with the error's code. */
export function describeTransportError(err: unknown, peer: TlsPeer = SERVICE): string {
  const code = errorCode(err);
  const message = err instanceof Error ? err.message : String(err);
  if (UNTRUSTED.has(code)) return `${peer.whose} TLS certificate is not signed by a trusted CA (${code}); if a private CA signed it, set ${peer.caSetting} to that CA's PEM file`;
  if (REFUSED.has(code)) return `${peer.whose} TLS certificate was refused: ${message} (${code})`;
  const words = WORDS[code] ?? message;
  return code === 'UNKNOWN' || words.includes(code) ? words : `${words} (${code})`;
}
