//! Feeding a BodyReader the bytes of a body cut anywhere, for its tests.
import { expect } from 'vitest';
import { BodyReader, type Framing } from '../../../src/api/http1/body-reader.js';
import { TransportError } from '../../../src/api/http1/errors.js';

/** Text as bytes, one byte per character. */
export const bytes = (text: string): Buffer => Buffer.from(text, 'latin1');

/** What a reader delivered and where its body ended. */
export interface Outcome {
  data: string;
  /** Offset in the whole input after the body, or undefined when it did not end. */
  end: number | undefined;
  done: boolean;
}

/**
 * Feeds `input` cut at `cuts` (increasing offsets inside it). With `views`, each feed is a
 * growing prefix of `input` read from the previous cut, so offsets are offsets in `input`;
 * otherwise each piece is a separate copy fed from 0. Stops feeding once the body ended.
 */
export function feedCuts(framing: Framing, input: Buffer, cuts: readonly number[], views: boolean): Outcome {
  const reader = new BodyReader(framing);
  const chunks: Buffer[] = [];
  const onData = (chunk: Buffer): void => {
    chunks.push(Buffer.from(chunk));
  };
  let end: number | undefined;
  let from = 0;
  for (const to of [...cuts, input.length]) {
    if (reader.done) break;
    const at = views ? reader.feed(input.subarray(0, to), from, onData) : from + reader.feed(Buffer.from(input.subarray(from, to)), 0, onData);
    if (reader.done) end = at;
    else expect(at).toBe(to);
    from = to;
  }
  return { data: Buffer.concat(chunks).toString('latin1'), end, done: reader.done };
}

/** Feeds `input` whole. */
export const feedWhole = (framing: Framing, input: string | Buffer): Outcome => feedCuts(framing, typeof input === 'string' ? bytes(input) : input, [], true);

/** Asserts that feeding `input` (cut at `cuts`) throws MLS_HTTP_BAD_RESPONSE. */
export function refused(input: string | Buffer, cuts: readonly number[] = []): TransportError {
  let caught: unknown;
  try {
    feedCuts({ kind: 'chunked' }, typeof input === 'string' ? bytes(input) : input, cuts, true);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(TransportError);
  expect((caught as TransportError).code).toBe('MLS_HTTP_BAD_RESPONSE');
  return caught as TransportError;
}

export const CHUNKED: Framing = { kind: 'chunked' };
