//! A TCP connect to a URL's host and port: the cheap reachability check of network sinks'
//! healthchecks. It sends nothing, so it changes nothing at the receiver.
import { connect } from 'node:net';
import { describeError } from '../errors.js';

/** Whether a TCP connection to `url`'s host and port opens within `timeoutMs`; `detail` says why not. */
export function probeTcp(url: URL, timeoutMs: number): Promise<{ ok: boolean; detail?: string }> {
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const finish = (result: { ok: boolean; detail?: string }) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => finish({ ok: false, detail: `${url.host}: no connection within ${timeoutMs} ms` }));
    socket.once('connect', () => finish({ ok: true, detail: `${url.host} reachable` }));
    socket.once('error', (err) => finish({ ok: false, detail: `${url.host}: ${describeError(err)}` }));
  });
}
