import { describe, expect, it } from 'vitest';
import { parseErrorDetails, parseSettingsBody } from '../../src/api/wire.js';
import { protocolError } from './helpers.js';

describe('parseSettingsBody', () => {
  it('returns the confirmation text', () => {
    expect(parseSettingsBody('{"status":"success","details":"Model updated successfully."}', 200)).toEqual({ details: 'Model updated successfully.' });
  });
  it.each(['{"status":"success"}', '{"status":"failed","details":"no"}', 'OK'])('refuses %s', (body) => {
    protocolError(() => parseSettingsBody(body, 200));
  });
});

describe('parseErrorDetails', () => {
  it.each([
    ['{"status":"error","details":"invalid next_token"}', 'invalid next_token'],
    ['{"message":"model not found"}', 'model not found'],
    ['{"details":{"min_replica":["must be >= 0"]}}', '{"min_replica":["must be >= 0"]}'],
    ['{"status":"error"}', undefined],
    ['<html>oops</html>', undefined],
    ['[1]', undefined],
  ])('reads %s', (body, expected) => {
    expect(parseErrorDetails(body)).toBe(expected);
  });
});
