//! Files not written for a while are closed and dropped from the file sink's state, so a
//! template that names a new file every hour does not keep every hour's file in it.
import type { FileHandles } from './handles.js';
import type { FileSinkState } from './state.js';

/**
 * Closes the descriptors unused for `idleMs` and drops from `state` the files not written
 * for `idleMs` (all their bytes are committed). `lastWrite` holds each path's last write,
 * in monotonic ms; a file known only from the committed state gets one idle period from now.
 */
export async function forgetIdleFiles(state: FileSinkState, handles: FileHandles, lastWrite: Map<string, number>, idleMs: number): Promise<void> {
  await handles.closeIdle(idleMs);
  const limit = performance.now() - idleMs;
  for (const path of Object.keys(state.files)) {
    if (handles.has(path)) continue;
    const last = lastWrite.get(path);
    if (last !== undefined && last > limit) continue;
    if (last === undefined) {
      lastWrite.set(path, performance.now());
      continue;
    }
    delete state.files[path];
    lastWrite.delete(path);
  }
}
