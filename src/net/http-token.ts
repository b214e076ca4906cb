//! HTTP's `token` (RFC 9110 §5.6.2): what a field name or a method may be. One definition
//! for the config's header names, the requests the service client writes and the answers
//! it reads.

/** A whole string that is an HTTP token. */
export const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
