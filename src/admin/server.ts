//! The admin HTTP server: /metrics (Prometheus), /healthz (liveness), /readyz
//! (readiness: state store open, no model lagging and no sink failing for longer than
//! health.max_lag) and /status (JSON).
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { parseListen } from '../config/units.js';
import { ConfigError, describeError } from '../errors.js';
import type { DaemonStatus } from '../daemon/status.js';
import { scrubSecrets } from '../telemetry/secrets.js';
import { formatDuration } from '../time/duration.js';

/** A running admin server. */
export interface AdminServer {
  /** `host:port` actually bound (the new one after {@link AdminServer.reconfigure} moved it). */
  readonly address: string;
  /** Serves `daemon` from now on; until then every path answers 503. */
  serve(daemon: StatusSource): void;
  /**
   * Applies a reloaded config's `admin.listen` and `health.max_lag`. A new address is bound
   * before the old one is let go: when it cannot be, a ConfigError naming `admin.listen` is
   * thrown and the server stays where it was.
   */
  reconfigure(listen: string, maxLagMs: number): Promise<void>;
  close(): Promise<void>;
}

/** What the admin server serves: the running daemon answers all of it. */
export interface StatusSource {
  /** The snapshot of `/status`; also what `/readyz` judges lag and failing sinks by. */
  status(): DaemonStatus;
  /** Liveness (`/healthz`): the daemon's periodic work runs and it is not stopping. */
  loopAlive(): boolean;
  /** Whether the state store answers (`/readyz`). */
  storeHealthy(): boolean;
  /** The Prometheus exposition of `/metrics`. */
  readonly metrics: { text(): Promise<string>; readonly contentType: string };
}

/** Options of {@link startAdminServer}. */
export interface AdminOptions {
  /** What to serve; may be given later, see {@link AdminServer.serve}. */
  daemon?: StatusSource;
  /** `host:port`; the default configuration binds 127.0.0.1 only. */
  listen: string;
  maxLagMs: number;
  logger: Logger;
}

/**
 * Starts the admin server; resolves once it listens. Binding comes first, before there is
 * a daemon to serve, so that an address in use stops `mls run` before it polls anything.
 * @throws ConfigError naming `admin.listen` when the address cannot be bound.
 */
export async function startAdminServer(o: AdminOptions): Promise<AdminServer> {
  let daemon = o.daemon;
  let maxLagMs = o.maxLagMs;
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      // errors quoted in /status and /readyz may carry a service's echo of a secret
      res.end(scrubSecrets(body));
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain', 'method not allowed\n');
    if (daemon === undefined) return send(503, 'text/plain', 'the daemon is starting\n');
    switch (path) {
      case '/metrics':
        daemon.metrics.text().then(
          (text) => send(200, daemon!.metrics.contentType, text),
          (err: unknown) => send(500, 'text/plain', `metrics failed: ${String(err)}\n`),
        );
        return;
      case '/healthz': {
        const alive = daemon.loopAlive();
        return send(alive ? 200 : 503, 'text/plain', alive ? 'ok\n' : 'the daemon loop is stalled\n');
      }
      case '/readyz': {
        const problems = readinessProblems(daemon, maxLagMs);
        return send(problems.length === 0 ? 200 : 503, 'text/plain', problems.length === 0 ? 'ready\n' : `${problems.join('\n')}\n`);
      }
      case '/status':
        return send(200, 'application/json', `${JSON.stringify(daemon.status(), null, 2)}\n`);
      default:
        return send(404, 'text/plain', 'not found: try /metrics, /healthz, /readyz, /status\n');
    }
  };
  let listen = o.listen;
  let bound = await bind(listen, handle);
  o.logger.info({ address: bound.address }, 'admin server listening');
  let closing: Promise<void> | undefined;
  return {
    get address() {
      return bound.address;
    },
    serve(d) {
      daemon = d;
    },
    async reconfigure(nextListen, nextMaxLagMs) {
      maxLagMs = nextMaxLagMs;
      if (nextListen === listen || closing) return;
      const next = await bind(nextListen, handle);
      const old = bound;
      [bound, listen] = [next, nextListen];
      o.logger.info({ from: old.address, address: next.address }, 'reload: admin server moved');
      await closeServer(old.server);
    },
    close() {
      closing ??= closeServer(bound.server);
      return closing;
    },
  };
}

/**
 * The admin server a reloaded config asks for: `current` moved or given the new
 * `health.max_lag`, a new one, or none. Throws, keeping `current`, when the new address
 * cannot be bound.
 */
export async function adminForReload(current: AdminServer | undefined, next: Pick<Config, 'admin' | 'health'>, daemon: StatusSource, logger: Logger): Promise<AdminServer | undefined> {
  if (!next.admin) {
    await current?.close();
    return undefined;
  }
  if (!current) return startAdminServer({ daemon, listen: next.admin.listen, maxLagMs: next.health.max_lag, logger });
  await current.reconfigure(next.admin.listen, next.health.max_lag);
  return current;
}

/** Listens on `listen` with `handle`; an address that cannot be bound is a ConfigError naming `admin.listen`. */
async function bind(listen: string, handle: RequestListener): Promise<{ server: Server; address: string }> {
  const { host, port } = bindAddress(listen);
  // Not an `import`: importing `node:http` as a module loads Node's bundled undici for its
  // lazy exports, a cost every start would pay.
  const server: Server = process.getBuiltinModule('node:http').createServer(handle);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'EADDRINUSE'
        ? `${host}:${port} is in use by another process; stop it, or give admin.listen another port`
        : code === 'EADDRNOTAVAIL'
          ? `${host} is not an address of this machine; listen on one of its addresses, or 0.0.0.0`
          : code === 'EACCES'
            ? `no permission to listen on ${host}:${port} (ports below 1024 need privileges); give admin.listen a port above 1023`
            : `cannot listen on ${host}:${port}: ${describeError(err)}`;
    throw new ConfigError(`admin.listen: ${why}`);
  }
  const addr = server.address() as AddressInfo;
  return { server, address: `${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}` };
}

/** Closes `server` and every connection to it: a client idle on a kept-alive connection, or halfway through a request, does not hold a stop. */
function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** Why the daemon is not ready; empty when it is. */
export function readinessProblems(daemon: Pick<StatusSource, 'status' | 'storeHealthy'>, maxLagMs: number): string[] {
  const problems: string[] = [];
  if (!daemon.storeHealthy()) problems.push('state store is not open');
  try {
    const status = daemon.status();
    for (const m of status.models) {
      if (m.lagSeconds * 1000 > maxLagMs) {
        problems.push(`model ${m.id} is behind by ${formatDuration(m.lagSeconds * 1000)} (health.max_lag ${formatDuration(maxLagMs)})${m.lastError ? `: ${m.lastError}` : ''}`);
      }
    }
    for (const s of status.sinks) {
      if (s.failingSeconds !== undefined && s.failingSeconds * 1000 > maxLagMs) {
        problems.push(`sink ${s.name} has failed without delivering for ${formatDuration(s.failingSeconds * 1000)} (health.max_lag ${formatDuration(maxLagMs)})${s.lastError ? `: ${s.lastError}` : ''}`);
      }
    }
  } catch (err) {
    problems.push(`status unavailable: ${String(err)}`);
  }
  return problems;
}

/** Where to listen for `listen` (the config checked it with the same parser): no host is loopback. */
function bindAddress(listen: string): { host: string; port: number } {
  const at = parseListen(listen);
  if (!at) return { host: '127.0.0.1', port: Number(listen) || 9464 };
  return { host: at.host || '127.0.0.1', port: at.port };
}
