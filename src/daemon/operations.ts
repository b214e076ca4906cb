//! What the commands that write to the state file ask of the running daemon, the file's
//! single writer (over the control channel, see control/): apply model settings, mark dead
//! letters for replay, purge them. Also the daemon's own apply of settings at start and at
//! reload (`settings_apply: on_reload`). Applies run one at a time.
import type { Logger } from 'pino';
import { z } from 'zod';
import { checkModelSettings, settingsSchema, type Config } from '../config/index.js';
import { configErrorMap, formatProblem, issuesToProblems } from '../config/problems.js';
import type { ApiClient } from '../api/types.js';
import { MlsError, UsageError, describeError } from '../errors.js';
import type { StateStore } from '../journal/store.js';
import { applySettings, type ApplySummary, type ModelApplyResult } from '../settings/apply.js';
import { declaredSettings, type DeclaredModel } from '../settings/plan.js';

/** Arguments of an apply asked for over the control channel. */
export interface ApplyArgs {
  /** The `api.base_url` of the caller's config: refused when it is not the daemon's. */
  baseUrl: string;
  declared: DeclaredModel[];
  all?: boolean;
  recordOnly?: boolean;
}

/** Options of {@link DaemonOperations}. */
export interface OperationsOptions {
  store: StateStore;
  client: ApiClient;
  logger: Logger;
  config(): Config;
  /** Wakes the delivery loops (dead letters marked for replay). */
  notifySinks(): void;
}

/** The daemon's operations on its state file, asked for by commands or by itself. */
export class DaemonOperations {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly stopping = new AbortController();

  constructor(private readonly o: OperationsOptions) {}

  /** Applies settings sent by `mls settings apply`; `onResult` sees each model's result. */
  applyRequested(args: unknown, onResult: (r: ModelApplyResult) => void, signal: AbortSignal): Promise<ApplySummary> {
    const req = checkApplyArgs(args);
    const own = this.o.config().api.base_url;
    if (req.baseUrl !== own) {
      throw new UsageError(`the running daemon applies settings through ${own}, not ${req.baseUrl}: give the same api.base_url, or apply with the daemon stopped`);
    }
    const log = this.o.logger.child({ component: 'settings' });
    const report = (r: ModelApplyResult) => {
      logResult(log, r);
      onResult(r);
    };
    return this.serialized(signal, (s) => applySettings(req, { client: this.o.client, state: this.o.store.settings, signal: s, onResult: report }));
  }

  /** With `settings_apply: on_reload`: applies the config's pending settings, logging each change. */
  applyOnReload(when: 'start' | 'reload'): Promise<void> {
    const config = this.o.config();
    if (config.settings_apply !== 'on_reload') return Promise.resolve();
    const declared = declaredSettings(config.models).filter((m) => Object.keys(m.settings).length > 0);
    const log = this.o.logger.child({ component: 'settings' });
    return this.serialized(undefined, (signal) =>
      applySettings({ declared }, { client: this.o.client, state: this.o.store.settings, signal, onResult: (r) => logResult(log, r) }),
    ).then(
      (summary) => {
        if (summary.failed.length > 0) log.error({ when, models: summary.failed }, "model settings not applied; they are tried again at the next reload (SIGHUP) or with 'mls settings apply'");
      },
      (err: unknown) => log.error({ when, err: describeError(err) }, 'applying model settings failed'),
    );
  }

  /** Marks dead letters (all, or one sink's) for replay; the delivery loops send them. Returns how many. */
  replayDeadLetters(args: unknown): { marked: number } {
    const marked = this.o.store.requestReplay(sinkArg(args));
    this.o.notifySinks();
    return { marked };
  }

  /** Deletes dead letters (all, or one sink's). Returns how many. */
  purgeDeadLetters(args: unknown): { purged: number } {
    const ids = this.o.store.listDeadLetters(sinkArg(args), 1_000_000).map((d) => d.id);
    return { purged: this.o.store.deleteDeadLetters(ids) };
  }

  /** Stops the apply in progress (its request in flight counts as not applied) and waits for it. Idempotent. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.queue.catch(() => undefined);
  }

  private serialized<T>(signal: AbortSignal | undefined, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const s = signal ? AbortSignal.any([signal, this.stopping.signal]) : this.stopping.signal;
    const next = this.queue.catch(() => undefined).then(() => run(s));
    this.queue = next;
    return next;
  }
}

function logResult(log: Logger, r: ModelApplyResult): void {
  if (r.outcome === 'applied') log.info({ model: r.modelId, fields: r.fields, details: r.details }, 'model settings applied');
  else if (r.outcome === 'recorded') log.info({ model: r.modelId, fields: r.fields }, 'model settings recorded as applied, not sent');
  else if (r.outcome === 'failed') log.error({ model: r.modelId, fields: r.fields, err: r.error?.message }, 'model settings not applied');
}

function sinkArg(args: unknown): string | undefined {
  const sink = (args as { sink?: unknown } | null)?.sink;
  if (sink === undefined || sink === null) return undefined;
  if (typeof sink !== 'string') throw new UsageError('sink: expected a sink name');
  return sink;
}

const applyArgsSchema = z.object({
  baseUrl: z.string(),
  declared: z.array(z.object({ modelId: z.string().min(1), settings: settingsSchema })),
  all: z.boolean().optional(),
  recordOnly: z.boolean().optional(),
});

/** Checks what a client sent as it checks a config: the daemon trusts no request blindly. */
function checkApplyArgs(args: unknown): ApplyArgs {
  const parsed = applyArgsSchema.safeParse(args, { error: configErrorMap });
  const problems = parsed.success ? checkModelSettings(parsed.data.declared).map((p) => ({ ...p, path: ['declared', ...p.path.slice(1)] })) : issuesToProblems(parsed.error.issues);
  if (!parsed.success || problems.length > 0) throw new MlsError('MLS_ERR_CONFIG', `settings.apply refused: ${problems.map(formatProblem).join('; ')}`, { exitCode: 78 });
  return { ...parsed.data, all: parsed.data.all === true, recordOnly: parsed.data.recordOnly === true };
}
