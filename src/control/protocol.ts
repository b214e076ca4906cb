//! The local control channel of a running daemon: a Unix socket beside the state file
//! (mode 0600), through which the commands that write to the state file (`mls settings
//! apply`, `mls dlq replay`, `mls dlq purge`) ask the daemon, the file's single writer, to
//! do the writing, and `mls tap` asks for the records the sinks get. The network admin port
//! stays read-only and never serves log content.
//!
//! One request per connection, one JSON object per line: the client sends
//! `{"v":1,"op":…,"args":…}`; the daemon answers with any number of `{"type":"event","data":…}`
//! lines, then one `{"type":"result","data":…}` or `{"type":"error","code":…,"message":…,"exitCode":…}`.

/** Version of the request format. */
export const CONTROL_VERSION = 1;

/** Longest request line accepted (the declared settings of many models fit easily). */
export const MAX_REQUEST_BYTES = 8 * 1024 * 1024;

/** The operations a running daemon takes over the channel. */
export const CONTROL_OPS = ['settings.apply', 'dlq.replay', 'dlq.purge', 'tap'] as const;
export type ControlOp = (typeof CONTROL_OPS)[number];

/** Most bytes of answers held for a client that is not reading them: events past it are not sent (emit says so). */
export const MAX_HELD_ANSWER_BYTES = 1024 * 1024;

/** A request line. */
export interface ControlRequest {
  v: number;
  op: ControlOp;
  args: unknown;
}

/** An answer line. */
export type ControlAnswer =
  | { type: 'event'; data: unknown }
  | { type: 'result'; data: unknown }
  | { type: 'error'; code: string; message: string; exitCode: number };

/** Where the control socket of the daemon whose state file is `statePath` listens. */
export function controlSocketPath(statePath: string): string {
  return `${statePath}.sock`;
}

/** Longest Unix socket path the system takes (108 bytes with the final NUL on Linux; 104 on macOS). */
export const MAX_SOCKET_PATH_BYTES = process.platform === 'linux' ? 107 : 103;
