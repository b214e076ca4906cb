//! How `mls status` asks a running daemon for its status: at the admin server's address, on
//! loopback when the server listens on every interface.
import { once } from 'node:events';
import { parseListen } from '../config/units.js';
import type { IncomingMessage } from 'node:http';
import type { DaemonStatus } from '../daemon/status.js';

/** The URL of the admin server's `/status`, asked on loopback when `listen` names no host (`:9464`, where the server listens on loopback) or every interface (`0.0.0.0`, `[::]`). */
export function statusUrl(listen: string): string | undefined {
  const at = parseListen(listen);
  if (!at) return undefined;
  const host = at.host === '' || at.host === '0.0.0.0' ? '127.0.0.1' : at.host === '::' ? '::1' : at.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${at.port}/status`;
}

/**
 * The running daemon's status from its admin server at `listen`; undefined when it answers
 * other than 200 or `listen` is no address. Rejects when it cannot be reached.
 * Plain `node:http`: loading an HTTP client library would cost the command more than the request.
 */
export function fetchStatus(listen: string): Promise<DaemonStatus | undefined> {
  const url = statusUrl(listen);
  return url === undefined ? Promise.resolve(undefined) : fetchStatusAt(url);
}

/** The status at `url` (a `/status` URL); as {@link fetchStatus}. */
export async function fetchStatusAt(url: string): Promise<DaemonStatus | undefined> {
  // Not an `import`: importing `node:http` as a module loads Node's bundled undici for its
  // lazy exports, a noticeable part of a command that should answer within a second.
  const { get } = process.getBuiltinModule('node:http');
  const req = get(url, { timeout: 2_000 });
  req.on('timeout', () => req.destroy(new Error('the admin server did not answer within 2 s')));
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  let body = '';
  for await (const chunk of res.setEncoding('utf8')) body += chunk as string;
  return res.statusCode === 200 ? (JSON.parse(body) as DaemonStatus) : undefined;
}
