// The file sink's open descriptors: fsyncing a batch's files together.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileHandles } from '../../../src/sinks/file/handles.js';

const dir = mkdtempSync(join(tmpdir(), 'mls-handles-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function handles(): FileHandles {
  return new FileHandles({ max: 16, fileMode: 0o644, dirMode: 0o755, syncDirs: false, beforeEvict: async () => undefined });
}

describe('FileHandles.syncAll', () => {
  it('syncs the open descriptors of the paths given and opens none', async () => {
    const h = handles();
    const a = join(dir, 'open-a.ndjson');
    const b = join(dir, 'open-b.ndjson');
    const fh = await h.acquire(a);
    await h.acquire(b);
    let synced = 0;
    const sync = fh.sync.bind(fh);
    fh.sync = () => {
      synced++;
      return sync();
    };
    const never = join(dir, 'never-opened.ndjson');
    await h.syncAll([a, b, never]);
    expect(synced).toBe(1);
    expect(existsSync(never)).toBe(false);
    await h.closeAll();
  });

  it('throws the first failure only after every other sync has ended', async () => {
    const h = handles();
    const failing = await h.acquire(join(dir, 'fails.ndjson'));
    const slow = await h.acquire(join(dir, 'slow.ndjson'));
    let slowEnded = false;
    failing.sync = () => Promise.reject(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }));
    const sync = slow.sync.bind(slow);
    slow.sync = async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await sync();
      slowEnded = true;
    };
    await expect(h.syncAll([join(dir, 'fails.ndjson'), join(dir, 'slow.ndjson')])).rejects.toMatchObject({ code: 'EIO' });
    // Neither sequential syncs (the failure first) nor a fail-fast wait would have let it end.
    expect(slowEnded).toBe(true);
    await h.closeAll();
  });
});
