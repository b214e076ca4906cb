//! The file sink's healthcheck: the nearest existing folder of the path template's fixed
//! beginning must be a writable directory. It reads only: it creates nothing.
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { describeError, fileErrorFix } from '../../errors.js';
import { errCode } from './io-errors.js';

/** Whether files under `staticPrefix` (the template's text before its first placeholder) could be created; a failure names `setting` in its fix. */
export async function checkWritableDir(staticPrefix: string, setting: string): Promise<{ ok: boolean; detail?: string }> {
  let dir = dirname(resolve(staticPrefix + 'x'));
  for (;;) {
    try {
      if (!(await stat(dir)).isDirectory()) return { ok: false, detail: `${dir} is not a directory` };
      await access(dir, constants.W_OK);
      return { ok: true, detail: `${dir} is writable` };
    } catch (err) {
      if (errCode(err) !== 'ENOENT' || dirname(dir) === dir) {
        const fix = fileErrorFix(err, setting);
        return { ok: false, detail: `${dir}: ${describeError(err)}${fix ? `; ${fix}` : ''}` };
      }
      dir = dirname(dir);
    }
  }
}
