import { describe, expect, it } from 'vitest';
import {
  ApiAuthError,
  ApiClientError,
  ApiError,
  ApiProtocolError,
  ApiResponseTooLargeError,
  ApiUnavailableError,
  makeExcerpt,
} from '../../src/api/errors.js';
import { MlsError } from '../../src/errors.js';

describe('API error classes', () => {
  it.each([
    [new ApiAuthError(401), 'MLS_ERR_API_AUTH', false, 3, 401],
    [new ApiAuthError(403), 'MLS_ERR_API_AUTH', false, 3, 403],
    [new ApiClientError('rejected', 400, 'bad window'), 'MLS_ERR_API_CLIENT', false, 4, 400],
    [new ApiProtocolError('not JSON', { status: 200, excerpt: '<html>' }), 'MLS_ERR_API_PROTOCOL', true, 4, 200],
    [new ApiUnavailableError('down', { status: 503, retryAfterMs: 1000 }), 'MLS_ERR_API_UNAVAILABLE', true, 4, 503],
    [new ApiUnavailableError('refused'), 'MLS_ERR_API_UNAVAILABLE', true, 4, undefined],
    [new ApiResponseTooLargeError(1024, { status: 200 }), 'MLS_ERR_API_TOO_LARGE', false, 4, 200],
  ] as const)('%s has code %s, retryable %s, exit code %s', (err, code, retryable, exitCode, status) => {
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toBeInstanceOf(MlsError);
    expect(err.code).toBe(code);
    expect(err.retryable).toBe(retryable);
    expect(err.exitCode).toBe(exitCode);
    expect(err.status).toBe(status);
    expect(err.name).toBe(err.constructor.name);
  });

  it('tells the user plainly that the token was refused', () => {
    expect(new ApiAuthError(401).message).toMatch(/refused the API token.*check/);
  });

  it('names api.max_response_bytes and the size of a response over it', () => {
    expect(new ApiResponseTooLargeError(65_536, { responseBytes: 204_851 }).message).toBe('the response (204851 bytes) is larger than api.max_response_bytes (65536 bytes)');
    expect(new ApiResponseTooLargeError(65_536).message).toBe('the response (more than 65536 bytes) is larger than api.max_response_bytes (65536 bytes)');
  });

  it('puts the service details into the client error message', () => {
    const err = new ApiClientError('the service rejected the request (HTTP 400)', 400, 'time_from is after time_to');
    expect(err.message).toBe('the service rejected the request (HTTP 400): time_from is after time_to');
    expect(err.details).toBe('time_from is after time_to');
  });
});

describe('makeExcerpt', () => {
  const scrub = (t: string): string => t.split('tok-SECRET-123').join('[REDACTED]');

  it('keeps at most 200 characters on one line', () => {
    const e = makeExcerpt(`<html>\n  <body>${'x'.repeat(1000)}</body>\n</html>`);
    expect(e.length).toBeLessThanOrEqual(200);
    expect(e).not.toContain('\n');
    expect(e.startsWith('<html> <body>xxx')).toBe(true);
  });

  it('scrubs the token, including one cut by the excerpt window', () => {
    expect(makeExcerpt('auth: tok-SECRET-123', scrub)).toBe('auth: [REDACTED]');
    for (let pad = 1500; pad < 2100; pad += 7) {
      const body = `${' '.repeat(pad)}tok-SECRET-123${' '.repeat(3000)}`;
      expect(makeExcerpt(body, scrub)).not.toContain('tok-SEC');
    }
  });
});
