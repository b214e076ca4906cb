//! `mls run --config F`: validates the config, then runs the daemon until SIGTERM/SIGINT.
//! SIGHUP re-reads the config.
import module from 'node:module';
import { Option, type Command } from 'commander';
import { configOption } from './common.js';
import type { LogFormat } from '../telemetry/logger.js';
import type { Logger } from 'pino';
import { ExitCode, describeError } from '../errors.js';
import type { AdminServer } from '../admin/server.js';
import type { ControlServer } from '../control/server.js';
import type { Daemon } from '../daemon/index.js';

/** Adds `mls run`. */
export function register(program: Command): void {
  program
    .command('run')
    .description('run the daemon: poll every configured model and ship new entries to the sinks')
    .addOption(configOption())
    .option('--log-level <level>', 'override log.level (trace, debug, info, warn, error)')
    .addOption(logFormatOption('override log.format'))
    .action(async (opts: { config: string; logLevel?: string; logFormat?: LogFormat }) => {
      const { loadConfig } = await import('./config.js');
      const config = await loadConfig(opts.config);
      const { createLogger } = await import('../telemetry/logger.js');
      const logger = createLogger({ level: opts.logLevel ?? config.log.level, format: opts.logFormat ?? config.log.format });
      const { Daemon } = await import('../daemon/index.js');
      const { startAdminServer, adminForReload } = await import('../admin/server.js');
      const adminLogger = logger.child({ component: 'admin' });
      // Bound before the daemon starts: an address in use stops mls before it polls anything.
      let admin: AdminServer | undefined = config.admin ? await startAdminServer({ listen: config.admin.listen, maxLagMs: config.health.max_lag, logger: adminLogger }) : undefined;
      // The state file could not be synced: exit at once, without closing it, and let the
      // supervisor restart mls, which recovers from what is on disk.
      const daemon = await Daemon.start({ config, logger, onFatal: () => process.exit(ExitCode.state) }).catch(async (err: unknown) => {
        await admin?.close();
        throw err;
      });
      admin?.serve(daemon);
      const control = await startControl(daemon, config.state.path, logger.child({ component: 'control' }));
      // Everything the daemon loads is loaded by now: kept for the next start, which a kill -9 would otherwise lose.
      module.flushCompileCache();
      await waitForShutdown({
        logger,
        timeoutMs: config.shutdown_timeout,
        stop: async () => {
          await control?.close();
          await daemon.stop();
          await admin?.close();
        },
        reload: async () => {
          try {
            const next = await loadConfig(opts.config);
            admin = await adminForReload(admin, next, daemon, adminLogger);
            await daemon.reload(next);
          } catch (err) {
            logger.error({ err: describeError(err), problems: (err as { problems?: unknown }).problems }, 'reload rejected; keeping the running configuration');
          }
        },
      });
    });
}

/** `--log-format`, of `run` and `demo`. */
export function logFormatOption(description: string): Option {
  return new Option('--log-format <format>', `${description}: json, pretty (one readable line each) or auto (pretty on a terminal)`).choices(['json', 'pretty', 'auto']);
}

/**
 * The control channel of the running daemon (a Unix socket beside the state file): the
 * commands that write to the state file go through it. Without it (a path too long for a
 * socket) the daemon runs on, and those commands say why they cannot reach it.
 */
export async function startControl(daemon: Daemon, statePath: string, logger: Logger): Promise<ControlServer | undefined> {
  const [{ startControlServer }, { controlSocketPath }] = await Promise.all([import('../control/server.js'), import('../control/protocol.js')]);
  const ops = daemon.operations;
  try {
    const server = await startControlServer({
      path: controlSocketPath(statePath),
      logger,
      handlers: {
        'settings.apply': (args, emit, signal) => ops.applyRequested(args, emit, signal),
        'dlq.replay': async (args) => ops.replayDeadLetters(args),
        'dlq.purge': async (args) => ops.purgeDeadLetters(args),
        tap: (args, emit, signal) => daemon.tap.serve(args, emit, signal),
      },
    });
    logger.info({ path: server.path }, 'control socket listening');
    return server;
  } catch (err) {
    logger.error({ err: describeError(err) }, "no control socket: 'mls settings apply', 'mls dlq replay', 'mls dlq purge' and 'mls tap' cannot reach this daemon");
    return undefined;
  }
}

/** How long a stopped daemon's process may wait for what still holds it (within shutdown_timeout). */
const LINGER_MS = 2_000;

/** Resolves once a stop signal was handled; a second signal, or the timeout, exits at once. */
export function waitForShutdown(o: { logger: import('pino').Logger; timeoutMs: number; stop: () => Promise<void>; reload?: () => Promise<void> }): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const onStop = (signal: NodeJS.Signals) => {
      if (stopping) {
        o.logger.warn({ signal }, 'second stop signal: exiting now');
        process.exit(1);
      }
      stopping = true;
      o.logger.info({ signal }, 'stop signal received');
      const timer = setTimeout(() => {
        o.logger.error({ timeoutMs: o.timeoutMs }, 'shutdown timed out; exiting (state is consistent; unfinished work is redone at the next start)');
        process.exit(1);
      }, o.timeoutMs).unref();
      const started = Date.now();
      o.stop().then(
        () => {
          clearTimeout(timer);
          process.off('SIGHUP', onHup);
          // Stopped, with everything flushed: the process ends once nothing holds it. What a
          // sink module left running (a socket, a timer) must not hold it much longer.
          setTimeout(() => {
            o.logger.warn('stopped, but something still holds the process (a sink module?); exiting');
            process.exit(process.exitCode ?? 0);
          }, Math.max(100, Math.min(LINGER_MS, o.timeoutMs - (Date.now() - started)))).unref();
          resolve();
        },
        (err: unknown) => {
          o.logger.error({ err: describeError(err) }, 'shutdown failed');
          process.exitCode = 1;
          resolve();
        },
      );
    };
    const onHup = () => {
      if (!stopping && o.reload) {
        o.logger.info('SIGHUP: reloading the configuration');
        void o.reload();
      }
    };
    process.on('SIGTERM', onStop);
    process.on('SIGINT', onStop);
    process.on('SIGHUP', onHup);
  });
}
