//! One response body, read from the bytes after its head, in the framing the head chose:
//! a Content-Length, chunked transfer coding, or everything until the connection closes.
import { badResponse } from './errors.js';
import { MAX_HEAD_BYTES } from './response-head.js';

/** How a body is delimited. */
export type Framing = { kind: 'length'; bytes: number } | { kind: 'chunked' } | { kind: 'close' };

// Longest chunk-size line (size, extensions) accepted.
const MAX_SIZE_LINE = 1024;
const HEX = /^[0-9a-fA-F]{1,12}$/;
const enum Chunk {
  Size,
  Data,
  DataEnd,
  Trailers,
}

/** Reads one body; `done` once it ended. */
export class BodyReader {
  done = false;
  private remaining: number;
  private state = Chunk.Size;
  /** The chunk-size or trailer line read so far. */
  private line = '';
  private trailerBytes = 0;
  private sawCr = false;

  constructor(private readonly framing: Framing) {
    this.remaining = framing.kind === 'length' ? framing.bytes : 0;
    if (framing.kind === 'length' && framing.bytes === 0) this.done = true;
  }

  /**
   * Consumes `buf` from `start`, handing body bytes to `onData` (views of `buf`). Returns
   * the offset where the body ended, or `buf.length` when it goes on.
   * @throws TransportError on a malformed chunked body.
   */
  feed(buf: Buffer, start: number, onData: (chunk: Buffer) => void): number {
    switch (this.framing.kind) {
      case 'close':
        if (start < buf.length) onData(start === 0 ? buf : buf.subarray(start));
        return buf.length;
      case 'length': {
        const take = Math.min(this.remaining, buf.length - start);
        if (take > 0) {
          this.remaining -= take;
          onData(start === 0 && take === buf.length ? buf : buf.subarray(start, start + take));
        }
        if (this.remaining === 0) this.done = true;
        return start + take;
      }
      case 'chunked':
        return this.feedChunked(buf, start, onData);
    }
  }

  /** The connection closed; true when that ends the body rather than cutting it short. */
  endsAtClose(): boolean {
    return this.framing.kind === 'close';
  }

  private feedChunked(buf: Buffer, start: number, onData: (chunk: Buffer) => void): number {
    let at = start;
    while (at < buf.length && !this.done) {
      switch (this.state) {
        case Chunk.Size: {
          const nl = this.lineEnd(buf, at, MAX_SIZE_LINE, 'a chunk-size line');
          if (nl < 0) return buf.length;
          at = nl + 1;
          // Extensions (`;name=value`) are ignored, as RFC 9112 §7.1.1 allows.
          const semi = this.line.indexOf(';');
          const size = (semi < 0 ? this.line : this.line.slice(0, semi)).replace(/[ \t]+$/, '');
          if (!HEX.test(size)) throw badResponse(`the chunk size ${JSON.stringify(this.line.slice(0, 32))}`);
          this.remaining = parseInt(size, 16);
          this.line = '';
          this.state = this.remaining === 0 ? Chunk.Trailers : Chunk.Data;
          break;
        }
        case Chunk.Data: {
          const take = Math.min(this.remaining, buf.length - at);
          onData(buf.subarray(at, at + take));
          this.remaining -= take;
          at += take;
          if (this.remaining === 0) this.state = Chunk.DataEnd;
          break;
        }
        case Chunk.DataEnd: {
          // CRLF (or a bare LF) after the chunk's data.
          const b = buf[at]!;
          if (b === 0x0d && !this.sawCr) this.sawCr = true;
          else if (b === 0x0a) {
            this.sawCr = false;
            this.state = Chunk.Size;
          } else throw badResponse('chunk data longer than its size');
          at++;
          break;
        }
        case Chunk.Trailers: {
          const nl = this.lineEnd(buf, at, Infinity, 'the trailer fields');
          // Counted as they arrive, so that a line split over many reads counts whole.
          this.trailerBytes += (nl < 0 ? buf.length : nl + 1) - at;
          if (this.trailerBytes > MAX_HEAD_BYTES) throw badResponse(`trailer fields over ${MAX_HEAD_BYTES} bytes`);
          if (nl < 0) return buf.length;
          at = nl + 1;
          // Trailer fields are read past, not used; an empty line ends the body.
          if (this.line === '') this.done = true;
          this.line = '';
          break;
        }
      }
    }
    return at;
  }

  /**
   * Adds the bytes of a line to `line` up to its LF (a CR before it is dropped) and returns
   * the LF's offset, or -1 when the line goes on past `buf`.
   */
  private lineEnd(buf: Buffer, at: number, limit: number, what: string): number {
    const nl = buf.indexOf(0x0a, at);
    const part = buf.toString('latin1', at, nl < 0 ? buf.length : nl);
    this.line += part;
    if (nl >= 0 && this.line.endsWith('\r')) this.line = this.line.slice(0, -1);
    // A CR whose LF has not arrived yet is not part of the line.
    if (this.line.length - (this.line.endsWith('\r') ? 1 : 0) > limit) throw badResponse(`${what} over ${limit} bytes`);
    return nl;
  }
}
