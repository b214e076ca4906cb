//! The admin HTTP server: /metrics (Prometheus), /healthz (liveness), /readyz
//! (readiness: state store open, no model lagging and no sink failing for longer than
//! health.max_lag) and /status (JSON).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { parseListen } from '../config/units.js';
import type { DaemonStatus } from '../daemon/status.js';
import { scrubSecrets } from '../telemetry/secrets.js';
import { formatDuration } from '../time/duration.js';

/** A running admin server. */
export interface AdminServer {
  /** `host:port` actually bound. */
  address: string;
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
  daemon: StatusSource;
  /** `host:port`; the default configuration binds 127.0.0.1 only. */
  listen: string;
  maxLagMs: number;
  logger: Logger;
}

/** Starts the admin server; resolves once it listens. */
export async function startAdminServer(o: AdminOptions): Promise<AdminServer> {
  const { host, port } = bindAddress(o.listen);
  // Not an `import`: importing `node:http` as a module loads Node's bundled undici for its
  // lazy exports, a cost every start would pay.
  const server: Server = process.getBuiltinModule('node:http').createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      // errors quoted in /status and /readyz may carry a service's echo of a secret
      res.end(scrubSecrets(body));
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain', 'method not allowed\n');
    switch (path) {
      case '/metrics':
        o.daemon.metrics.text().then(
          (text) => send(200, o.daemon.metrics.contentType, text),
          (err: unknown) => send(500, 'text/plain', `metrics failed: ${String(err)}\n`),
        );
        return;
      case '/healthz': {
        const alive = o.daemon.loopAlive();
        return send(alive ? 200 : 503, 'text/plain', alive ? 'ok\n' : 'the daemon loop is stalled\n');
      }
      case '/readyz': {
        const problems = readinessProblems(o.daemon, o.maxLagMs);
        return send(problems.length === 0 ? 200 : 503, 'text/plain', problems.length === 0 ? 'ready\n' : `${problems.join('\n')}\n`);
      }
      case '/status':
        return send(200, 'application/json', `${JSON.stringify(o.daemon.status(), null, 2)}\n`);
      default:
        return send(404, 'text/plain', 'not found: try /metrics, /healthz, /readyz, /status\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const address = `${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
  o.logger.info({ address }, 'admin server listening');
  let closing: Promise<void> | undefined;
  return {
    address,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
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
