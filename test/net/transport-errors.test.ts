//! The words for what went wrong on a connection: each family of codes says what a user
//! can do about it, and an unknown code keeps the error's own message.
import { describe, expect, it } from 'vitest';
import { describeTransportError, errorCode } from '../../src/net/transport-errors.js';
import { ApiUnavailableError } from '../../src/api/errors.js';

const coded = (code: string, message = `failed with ${code}`): Error => Object.assign(new Error(message), { code });

describe('transport errors', () => {
  it('take the code of an MlsError, of a Node or undici error, else UNKNOWN', () => {
    expect(errorCode(new ApiUnavailableError('down'))).toBe(new ApiUnavailableError('down').code);
    expect(errorCode(coded('ECONNRESET'))).toBe('ECONNRESET');
    expect(errorCode(Object.assign(new Error('x'), { code: 42 }))).toBe('UNKNOWN');
    expect(errorCode(null)).toBe('UNKNOWN');
    expect(errorCode('a string')).toBe('UNKNOWN');
  });

  it.each([
    ['ECONNREFUSED', 'connection refused'],
    ['ECONNRESET', 'connection closed by the other side'],
    ['EPIPE', 'connection closed by the other side'],
    ['UND_ERR_SOCKET', 'connection closed by the other side'],
    ['UND_ERR_CONNECT_TIMEOUT', 'timed out connecting'],
    ['UND_ERR_HEADERS_TIMEOUT', 'timed out waiting for the response'],
    ['UND_ERR_BODY_TIMEOUT', 'timed out receiving the response body'],
    ['ENOTFOUND', 'host name not found'],
    ['EAI_AGAIN', 'host name not found'],
  ])('%s reads "%s", with the code', (code, words) => {
    expect(describeTransportError(coded(code))).toBe(`${words} (${code})`);
  });

  it('an untrusted certificate points to the CA setting of the endpoint; a refused one keeps its reason', () => {
    for (const code of ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT']) {
      const words = describeTransportError(coded(code));
      expect(words).toContain('api.ca_file');
      expect(words).toContain(`(${code})`);
    }
    expect(describeTransportError(coded('SELF_SIGNED_CERT_IN_CHAIN'), { whose: "the receiver's", caSetting: 'sinks.hook.ca_file' })).toMatch(/^the receiver's TLS certificate .*set sinks\.hook\.ca_file/);
    expect(describeTransportError(coded('CERT_HAS_EXPIRED', 'certificate has expired'))).toBe("the service's TLS certificate was refused: certificate has expired (CERT_HAS_EXPIRED)");
  });

  it('an unknown code keeps the message with the code; an error without one, its message alone', () => {
    expect(describeTransportError(coded('EHOSTUNREACH', 'connect EHOSTUNREACH'))).toBe('connect EHOSTUNREACH');
    expect(describeTransportError(coded('EHOSTUNREACH', 'no route'))).toBe('no route (EHOSTUNREACH)');
    expect(describeTransportError(new Error('socket hang up'))).toBe('socket hang up');
    expect(describeTransportError('plain text')).toBe('plain text');
  });
});
