//! A real HTTP proxy on 127.0.0.1 (the `proxy` package: CONNECT tunnels and forwarded
//! requests) that counts what went through it and the Proxy-Authorization each carried.
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createProxy } from 'proxy';

/** What went through the proxy. */
export interface ProxyUse {
  /** `CONNECT host:port` (a tunnel) or `FORWARD <absolute URL>`. */
  what: string;
  /** The Proxy-Authorization header, if any. */
  authorization: string | undefined;
}

export interface TestProxy {
  /** `http://127.0.0.1:<port>`, without credentials. */
  url: string;
  /** The proxy's URL with credentials, `http://user:password@127.0.0.1:<port>`. */
  urlWith(user: string, password: string): string;
  /** Every request and tunnel, accepted or refused, in order. */
  uses: ProxyUse[];
  close(): Promise<void>;
}

/**
 * Starts a proxy. With `credentials`, only requests carrying them as Basic
 * Proxy-Authorization are served; the others get 407.
 */
export async function startProxy(credentials?: { user: string; password: string }): Promise<TestProxy> {
  const server = createProxy(createServer());
  const uses: ProxyUse[] = [];
  const expected = credentials && `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`).toString('base64')}`;
  server.authenticate = (req) => {
    uses.push({ what: req.method === 'CONNECT' ? `CONNECT ${req.url}` : `FORWARD ${req.url}`, authorization: req.headers['proxy-authorization'] });
    return expected === undefined || req.headers['proxy-authorization'] === expected;
  };
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    urlWith: (user, password) => `http://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}`,
    uses,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
