//! `mls validate --check-service`: one cheap request per model (the logs of the last second,
//! first page only, fewer logs asked for), through the service client the daemon would make
//! from the config, within the config's request budget. Each answer is read as
//! docs/commands.md says: the spec shows no error codes, so this module is where their
//! meaning for a model is decided.
import PQueue from 'p-queue';
import { ApiAuthError, ApiClientError, ApiError } from '../api/errors.js';
import { createApiClient } from '../api/client.js';
import type { Config } from '../config/index.js';
import { describeError, ExitCode } from '../errors.js';
import { configClientOptions } from './config.js';

/** What the service's answer says about one model. */
export type ServiceVerdict = 'ok' | 'token refused' | 'unknown model' | 'refused' | 'no answer';

/** One model's check. */
export interface ServiceCheck {
  modelId: string;
  verdict: ServiceVerdict;
  /** The HTTP status, when an answer came. */
  status?: number | undefined;
  /** What the service said, or why no answer came. */
  detail: string;
}

/** The span asked for, ending now: short, so that the answer is small. */
const WINDOW_MS = 1_000;

/** Longest one model's check may take, retries included. */
const CHECK_DEADLINE_MS = 15_000;

/** Checks every model of `config` with the client the daemon would make; results in config order. Rejects only when no client can be made. */
export async function checkService(config: Config): Promise<ServiceCheck[]> {
  const options = await configClientOptions(config);
  // A service that does not answer fails the check within this, not after the daemon's whole retry deadline.
  const client = createApiClient({ ...options, retry: { ...options.retry, deadlineMs: Math.min(options.retry?.deadlineMs ?? Infinity, CHECK_DEADLINE_MS) } });
  const limit = config.poll.rate_limit;
  const queue = new PQueue({ concurrency: config.poll.concurrency, ...(limit ? { intervalCap: limit.count, interval: limit.perMs } : {}) });
  return Promise.all(
    config.models.map((m) =>
      queue.add(async (): Promise<ServiceCheck> => {
        const toMs = Date.now();
        try {
          const page = await client.getLogs({ modelId: m.id, fromMs: toMs - WINDOW_MS, toMs, isLessLogs: m.is_less_logs ?? true });
          return { modelId: m.id, verdict: 'ok', status: page.httpStatus, detail: `${page.count} entr${page.count === 1 ? 'y' : 'ies'} in the last second` };
        } catch (err) {
          return readFailure(m.id, err);
        }
      }),
    ),
  ).finally(() => client.close());
}

/** How a failed request is read (the table of docs/commands.md). */
function readFailure(modelId: string, err: unknown): ServiceCheck {
  const status = err instanceof ApiError ? err.status : undefined;
  const said = err instanceof ApiClientError && err.details ? `: ${err.details}` : '';
  if (err instanceof ApiAuthError) return { modelId, verdict: 'token refused', status, detail: 'the service refused the API token for this model' };
  if (err instanceof ApiClientError && status === 404) return { modelId, verdict: 'unknown model', status, detail: `the service does not know this model${said}` };
  if (err instanceof ApiClientError) {
    return { modelId, verdict: 'refused', status, detail: `the service refused a well-formed request for this model${said}; a model id it does not know is the usual cause` };
  }
  return { modelId, verdict: 'no answer', status, detail: describeError(err) };
}

/** One line per model, then what to do; and the exit code: 3 when a token was refused, 4 for any other failure, else 0. */
export function renderServiceChecks(checks: readonly ServiceCheck[]): { text: string; exitCode: ExitCode } {
  const lines = checks.map((c) => `model ${c.modelId}: ${c.verdict === 'ok' ? 'ok' : c.verdict.toUpperCase()}${c.status === undefined ? '' : ` (HTTP ${c.status})`}, ${c.detail}\n`);
  const failed = checks.filter((c) => c.verdict !== 'ok');
  const named = (v: ServiceVerdict) => checks.filter((c) => c.verdict === v).map((c) => c.modelId);
  if (failed.length === 0) return { text: `${lines.join('')}service: every model answered (${checks.length})\n`, exitCode: ExitCode.ok };
  const parts = (['token refused', 'unknown model', 'refused', 'no answer'] as const).filter((v) => named(v).length > 0).map((v) => `${v}: ${named(v).join(', ')}`);
  let hint = '';
  if (failed.length === checks.length && failed.every((c) => c.status === 404)) hint = 'every model answered 404: if the ids are right, check api.base_url (its path prefix)\n';
  else if (named('token refused').length > 0) hint = 'check that the token is current and belongs to the workspace of these models\n';
  return {
    text: `${lines.join('')}service: ${checks.length - failed.length} of ${checks.length} models answered; ${parts.join('; ')}\n${hint}`,
    exitCode: named('token refused').length > 0 ? ExitCode.auth : ExitCode.service,
  };
}
