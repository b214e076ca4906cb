//! Gathered appends: buffers written in order with `writev`, without first copying them
//! into one. A batch's lines arrive as one buffer per journal page.

/** Most buffers in one `writev` (Linux's IOV_MAX). */
export const MAX_IOVECS = 1024;

/** Where the bytes go: a file handle opened for appending. */
export interface GatherTarget {
  writev(buffers: Buffer[]): Promise<{ bytesWritten: number }>;
}

/** The pieces after their first `n` bytes (`n` at most their total). */
export function dropBytes(pieces: readonly Buffer[], n: number): Buffer[] {
  let i = 0;
  while (i < pieces.length && n >= pieces[i]!.length) n -= pieces[i++]!.length;
  const rest = pieces.slice(i);
  if (n > 0) rest[0] = rest[0]!.subarray(n);
  return rest;
}

/**
 * Writes every byte of `pieces`, in order. A short write goes on where it stopped;
 * `onWritten` hears of each write's bytes as it lands, so a failure part way leaves the
 * caller knowing how far the file got.
 */
export async function writeAll(target: GatherTarget, pieces: readonly Buffer[], onWritten: (bytes: number) => void): Promise<void> {
  let rest = pieces.filter((p) => p.length > 0);
  while (rest.length > 0) {
    const { bytesWritten } = await target.writev(rest.slice(0, MAX_IOVECS));
    if (bytesWritten <= 0) throw new Error('a write to the file wrote nothing');
    onWritten(bytesWritten);
    rest = dropBytes(rest, bytesWritten);
  }
}
