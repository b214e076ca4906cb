//! The file sink's healthcheck: the nearest existing folder of the path template's fixed
//! beginning must be a writable directory. It reads only: it creates nothing.
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { errorCode } from '../../net/transport-errors.js';
import { describeWithFix } from './io-errors.js';

/** Whether files under `staticPrefix` (the template's text before its first placeholder) could be created; a failure names `setting` in its fix. */
export async function checkWritableDir(staticPrefix: string, setting: string): Promise<{ ok: boolean; detail?: string }> {
  let dir = dirname(resolve(staticPrefix + 'x'));
  for (;;) {
    try {
      if (!(await stat(dir)).isDirectory()) return { ok: false, detail: `${dir} is not a directory` };
      await access(dir, constants.W_OK);
      return { ok: true, detail: `${dir} is writable` };
    } catch (err) {
      if (errorCode(err) !== 'ENOENT' || dirname(dir) === dir) return { ok: false, detail: `${dir}: ${describeWithFix(err, setting)}` };
      dir = dirname(dir);
    }
  }
}
