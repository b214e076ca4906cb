//! Continuation tokens of the simulated logs operation: the paging state itself, signed,
//! so the server keeps nothing per fetch and a forged or altered token is recognised.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** What a token carries: the window, the snapshot and where the next page starts. */
export interface PageCursor {
  modelId: string;
  fromMs: number;
  toMs: number;
  snapTime: number;
  snapSeq: number;
  /** (ms, ns, seq) of the last entry served; the next page starts after it. */
  after: [number, number, number];
  issuedAt: number;
}

/** Signs and verifies tokens with a key that lives as long as the simulator. */
export class TokenCodec {
  private readonly key = randomBytes(32);

  /** Encodes a cursor as an opaque URL-safe string. */
  encode(c: PageCursor): string {
    const payload = Buffer.from(
      JSON.stringify([c.modelId, c.fromMs, c.toMs, c.snapTime, c.snapSeq, c.after[0], c.after[1], c.after[2], c.issuedAt]),
    ).toString('base64url');
    return `${payload}.${this.sign(payload).toString('base64url')}`;
  }

  /** Decodes a token, or returns `undefined` when it was not issued by this codec. */
  decode(token: string): PageCursor | undefined {
    const dot = token.indexOf('.');
    if (dot <= 0) return undefined;
    const payload = token.slice(0, dot);
    const mac = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = this.sign(payload);
    if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) return undefined;
    try {
      const a = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown[];
      if (!Array.isArray(a) || a.length !== 9 || typeof a[0] !== 'string' || !a.slice(1).every((x) => typeof x === 'number')) return undefined;
      const n = a as [string, number, number, number, number, number, number, number, number];
      return { modelId: n[0], fromMs: n[1], toMs: n[2], snapTime: n[3], snapSeq: n[4], after: [n[5], n[6], n[7]], issuedAt: n[8] };
    } catch {
      // Not a token this simulator issued: the caller answers 400 as the service would.
      return undefined;
    }
  }

  private sign(payload: string): Buffer {
    return createHmac('sha256', this.key).update(payload).digest().subarray(0, 16);
  }
}
