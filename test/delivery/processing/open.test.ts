// A sink's stage reopened at start: lines of its open groups that `drop_oldest` dropped from
// the journal are gone for good then, and counted as dropped (mls_sink_dropped_total) with an
// error line, although the sink's cursor had passed them and the drop counted none for it.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStage } from '../../../src/delivery/processing/open.js';
import { ProcessingStage, type ModelProgress } from '../../../src/delivery/processing/stage.js';
import { TestJournal, tempDir } from '../../helpers/delivery.js';

let tmp: ReturnType<typeof tempDir>;
let journal: TestJournal;
beforeEach(() => {
  tmp = tempDir('mls-open-');
  journal = new TestJournal(join(tmp.dir, 'state.db'));
});
afterEach(() => {
  journal.close();
  tmp.remove();
});

const idle: ModelProgress = { watermarkNs: () => undefined, journaledThrough: () => 0, stopped: () => false };

describe('openStage', () => {
  it('counts the held lines drop_oldest dropped, once a restart finds them gone', () => {
    journal.appendLines('a', ['INFO: x', 'ERROR:app:failed']);
    journal.appendLines('a', ['Traceback (most recent call last):', '  File "/app/x.py", line 1, in f']);
    journal.store.ensureSink('s');
    // The sink delivered the first line and holds the open traceback, its cursor past it.
    const stage = new ProcessingStage({ sink: 's', processor: {}, raw: false, progress: idle });
    expect(stage.build(journal.store.slicesAfter(0, 100), 4).records).toHaveLength(1);
    const held = stage.held();
    journal.store.ack('s', 4, 1, undefined, held);
    // The journal is full: the oldest page goes, one of its lines held in the group.
    expect(journal.store.dropOldest(2)).toEqual(new Map());

    let dropped = 0;
    const said: Array<[string, object, string | undefined]> = [];
    const say = (level: string) => (obj: object, msg?: string) => void said.push([level, obj, msg]);
    const reopened = openStage({
      sink: 's',
      processor: {},
      raw: false,
      progress: idle,
      logger: { debug: say('debug'), info: say('info'), warn: say('warn'), error: say('error') },
      models: undefined,
      held: held.json,
      readRange: (a, b) => journal.store.slicesOfRange(a, b),
      dropped: (lines) => void (dropped += lines),
    });
    expect(dropped).toBe(1);
    expect(reopened.heldLines()).toBe(2);
    expect(said).toEqual([['error', { sink: 's', dropped: 1 }, expect.stringContaining('drop_oldest')]]);
  });
});
