import { describe, expect, it } from 'vitest';
import { startAtChanges, type StartAtOfModel } from '../../src/poller/start-at.js';

const T = Date.parse('2026-01-01T00:00:00.000Z');

describe('startAtChanges', () => {
  it('groups changed models by their pair of settings and records every new setting', () => {
    const models: StartAtOfModel[] = [
      { id: 'a', startAt: { kind: 'relative', ms: 3_600_000 }, checkpoint: { startMs: T, startAt: '-30m' } },
      { id: 'b', startAt: { kind: 'relative', ms: 3_600_000 }, checkpoint: { startMs: T, startAt: '-30m' } },
      { id: 'c', startAt: { kind: 'relative', ms: 3_600_000 }, checkpoint: { startMs: T, startAt: '-1h' } },
      { id: 'd', startAt: { kind: 'now' }, checkpoint: { startMs: T, startAt: '-30m' } },
      { id: 'new', startAt: { kind: 'now' }, checkpoint: undefined },
    ];
    const adopted: string[] = [];
    const changes = startAtChanges(models, (id, s) => adopted.push(`${id}=${s}`));
    expect(changes).toEqual([
      { previous: '-30m', configured: '-1h', models: ['a', 'b'] },
      { previous: '-30m', configured: 'now', models: ['d'] },
    ]);
    expect(adopted).toEqual(['a=-1h', 'b=-1h', 'd=now']);
  });

  it('with a checkpoint of an earlier version (no setting stored), says only what it can know: an absolute start that moved', () => {
    const adopted: string[] = [];
    const changes = startAtChanges(
      [
        { id: 'moved', startAt: { kind: 'absolute', ms: T + 1000 }, checkpoint: { startMs: T, startAt: undefined } },
        { id: 'same', startAt: { kind: 'absolute', ms: T }, checkpoint: { startMs: T, startAt: undefined } },
        { id: 'relative', startAt: { kind: 'relative', ms: 60_000 }, checkpoint: { startMs: T, startAt: undefined } },
      ],
      (id, s) => adopted.push(`${id}=${s}`),
    );
    expect(changes).toEqual([{ previous: new Date(T).toISOString(), configured: new Date(T + 1000).toISOString(), models: ['moved'] }]);
    expect(adopted).toEqual([`moved=${new Date(T + 1000).toISOString()}`, `same=${new Date(T).toISOString()}`, 'relative=-1m']);
  });
});
