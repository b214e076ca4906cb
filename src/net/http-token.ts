//! HTTP's `token` (RFC 9110 §5.6.2): what a header field name may be, for the config's
//! header names.

/** A whole string that is an HTTP token. */
export const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
