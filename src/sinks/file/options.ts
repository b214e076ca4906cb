//! What the file sink is built from: its config block's own fields, and internal limits.

/** Options of the file sink (the `file` sink's config block, already validated). */
export interface FileSinkOptions {
  /** Path template: `{model_id}` and UTC time codes `%Y %m %d %H %M %S %j %%` of each entry's time. */
  path: string;
  /** `always`: after every write; `batch`: each touched file once per batch; `never`: leave it to the OS. */
  fsync: 'always' | 'batch' | 'never';
  /** Rotate a file once it would exceed `max_bytes`, or `max_age` ms after it was started. */
  rotate?: { max_bytes?: number; max_age?: number };
  /** Compress rotated files in the background. */
  compress: 'none' | 'gzip';
  /** Mode of created files (subject to the umask). */
  file_mode: number;
  /** Mode of created directories (subject to the umask). */
  dir_mode: number;
}

/** Internal limits, for tests and tuning; not part of the config. */
export interface FileSinkTuning {
  /** Most descriptors kept open at once. Default 256: more active models than this reopen (and sync) a file per batch. */
  maxOpenFiles?: number;
  /** A file not written for this long is closed and forgotten by the state. Default 5 min. */
  idleCloseMs?: number;
}
