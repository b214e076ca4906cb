// Generated response bodies for the logs operation: well-formed pages of every shape the
// spec allows, pages with an off-spec entry, and bodies broken in every way a real service
// or proxy can break them. The parser never crashes: it throws ApiProtocolError, or it
// returns exactly the entries of the body, each off-spec one kept with its fields as text
// and its reason. Every run is counted as accepted or rejected.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ApiProtocolError } from '../../../src/api/errors.js';
import { ObjectsPage, parseLogsBody } from '../../../src/api/page/json.js';
import { registerSecret } from '../../../src/telemetry/secrets.js';
import { entryTimeNs } from '../../../src/time/timestamp.js';
import { TOKEN, arbitrary, broken, offSpecEntry, reference, wellFormed } from './wire-arbitraries.js';
import { runs } from '../../helpers/long.js';

const RUNS = runs(10_000);
// the client registers its token: excerpts of malformed bodies must not show it
registerSecret(TOKEN);

describe('parseLogsBody over generated bodies', () => {
  it(`never crashes on ${RUNS} bodies: a protocol error or exactly the body's entries, every run counted`, { timeout: 120_000 }, () => {
    let accepted = 0;
    let rejected = 0;
    let runs = 0;
    const byCategory = new Map<string, { accepted: number; rejected: number }>();

    fc.assert(
      fc.property(fc.oneof({ weight: 3, arbitrary: wellFormed }, { weight: 2, arbitrary: offSpecEntry }, { weight: 3, arbitrary: broken }, { weight: 3, arbitrary: arbitrary }), (c) => {
        runs++;
        const tally = byCategory.get(c.category) ?? { accepted: 0, rejected: 0 };
        byCategory.set(c.category, tally);
        let result: ReturnType<typeof parseLogsBody> | undefined;
        let error: unknown;
        try {
          result = parseLogsBody(c.body, 200);
        } catch (err) {
          error = err;
        }
        if (error !== undefined) {
          rejected++;
          tally.rejected++;
          expect(error).toBeInstanceOf(ApiProtocolError);
          const e = error as ApiProtocolError;
          expect(e.code).toBe('MLS_ERR_API_PROTOCOL');
          expect(e.status).toBe(200);
          expect(typeof e.message).toBe('string');
          expect((e.excerpt ?? '').length).toBeLessThanOrEqual(200);
          expect(e.excerpt ?? '').not.toContain(TOKEN);
          expect(e.message).not.toContain(TOKEN);
        } else {
          accepted++;
          tally.accepted++;
        }

        const want = c.expect.kind === 'reference' ? reference(c.body) : undefined;
        if (c.expect.kind === 'accept') {
          expect(error, `a well-formed body was refused: ${String(error)}`).toBeUndefined();
          expect(result!.entries).toEqual(c.expect.entries);
          expect(result!.nextToken).toBe(c.expect.nextToken);
        } else if (c.expect.kind === 'reject') {
          expect(result, `an off-spec body was accepted: ${c.body.slice(0, 200)}`).toBeUndefined();
        } else if (want!.ok) {
          expect(error, `the reference accepts this body: ${c.body.slice(0, 200)}`).toBeUndefined();
          expect(result!.entries).toEqual(want!.entries);
          expect(result!.nextToken).toBe(want!.nextToken);
          // the page's codes: the reference's, with a string time that does not parse as code 2
          const codes = new ObjectsPage(result!.entries, result!.nextToken, result!.offSpec).keys(new BigInt64Array(want!.entries.length), new Float64Array(want!.entries.length));
          const wanted = want!.codes.map((code, i) => (code === 0 || code > 2) && entryTimeNs(want!.entries[i]!.time) === undefined ? 2 : code);
          expect([...(codes ?? wanted.map(() => 0))]).toEqual(wanted);
        } else {
          expect(result, `the reference rejects this body: ${c.body.slice(0, 200)}`).toBeUndefined();
        }
        // entries are copies holding exactly the three spec fields
        for (const e of result?.entries ?? []) expect(Object.keys(e).sort()).toEqual(['log', 'stream', 'time']);
      }),
      { numRuns: RUNS, seed: Number(process.env.MLS_PROPERTY_SEED ?? 20240501) },
    );

    console.log(
      `wire property: ${runs} bodies, ${accepted} accepted, ${rejected} rejected; ` +
        [...byCategory].map(([k, v]) => `${k} ${v.accepted}/${v.rejected}`).join(', '),
    );
    expect(runs).toBe(RUNS);
    expect(accepted + rejected).toBe(runs);
    // every category was exercised, and broken categories only ever rejected
    for (const k of ['well-formed', 'bad entry field', 'entry not an object', 'bad details', 'bad status', 'bad next_token', 'top level not an object', 'truncated', 'html', 'empty', 'random text', 'random JSON', 'random bytes', 'random fields', 'mixed details']) {
      expect(byCategory.get(k), k).toBeDefined();
    }
    expect(byCategory.get('well-formed')!.rejected).toBe(0);
    expect(byCategory.get('truncated')!.accepted).toBe(0);
    expect(byCategory.get('html')!.accepted).toBe(0);
    // an off-spec entry never stops its page
    expect(byCategory.get('bad entry field')!.rejected).toBe(0);
    expect(byCategory.get('entry not an object')!.rejected).toBe(0);
  });
});
