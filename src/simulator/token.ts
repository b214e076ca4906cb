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
    const [payload = '', mac = '', ...rest] = token.split('.');
    const expected = this.sign(payload);
    const given = Buffer.from(mac, 'base64url');
    if (rest.length > 0 || given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    // Signed by this codec: the payload is a cursor it wrote.
    const [modelId, fromMs, toMs, snapTime, snapSeq, ms, ns, seq, issuedAt] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as [string, ...number[]];
    return { modelId, fromMs: fromMs!, toMs: toMs!, snapTime: snapTime!, snapSeq: snapSeq!, after: [ms!, ns!, seq!], issuedAt: issuedAt! };
  }

  private sign(payload: string): Buffer {
    return createHmac('sha256', this.key).update(payload).digest().subarray(0, 16);
  }
}
