//! The stdout sink: NDJSON lines on standard output, for piping into another tool.
//! A batch is acknowledged only once the stream has taken it, so a slow reader slows
//! delivery down instead of growing memory.
import type { Sink, SinkBatch, SinkContext, SendOutcome } from '../contract.js';
import { ConfigError, describeError } from '../../errors.js';
import { ndjsonBytes } from '../../records/ndjson.js';
import { batchChunks } from '../batch-ndjson.js';

/** Options of the stdout sink. */
export interface StdoutSinkOptions {
  /** Output format; only `ndjson` (one JSON object per line). */
  format?: 'ndjson';
  /** The rest of the sink's block (name, batch, retry…), which the delivery loop uses. */
  [key: string]: unknown;
}

const RETRY_AFTER_MS = 5_000;
const ERROR_LOG_INTERVAL_MS = 60_000;

/**
 * Creates a sink writing to `stream` (standard output by default). A failed write
 * (a closed pipe, say) is logged at error level (at most once a minute) and reported
 * as `retry`.
 */
export function createStdoutSink(config: StdoutSinkOptions, ctx: SinkContext, stream: NodeJS.WritableStream = process.stdout): Sink {
  if (config.format !== undefined && config.format !== 'ndjson') {
    const msg = `sinks.${ctx.name}.format must be "ndjson", got ${JSON.stringify(config.format)}`;
    throw new ConfigError(msg, [msg]);
  }
  let lastError: Error | undefined;
  let errorLoggedAt = Number.NEGATIVE_INFINITY;
  let closing: Promise<void> | undefined;
  let chain: Promise<unknown> = Promise.resolve();
  // Without a listener, an EPIPE 'error' event would crash the process.
  const onError = (err: Error): void => {
    lastError = err;
  };
  stream.on('error', onError);

  const logError = (err: unknown): void => {
    const now = performance.now();
    const payload = { sink: ctx.name, code: (err as { code?: unknown }).code, err: describeError(err) };
    if (now - errorLoggedAt >= ERROR_LOG_INTERVAL_MS) {
      errorLoggedAt = now;
      ctx.logger.error(payload, 'Could not write to standard output; the batch will be retried.');
    } else {
      ctx.logger.debug(payload, 'Could not write to standard output; the batch will be retried.');
    }
  };

  const write = (text: Buffer): Promise<Error | undefined> =>
    new Promise((resolve) => {
      let settled = false;
      const done = (err?: Error | null): void => {
        if (settled) return;
        settled = true;
        stream.off('error', onWriteError);
        resolve(err ?? undefined);
      };
      const onWriteError = (err: Error): void => done(err);
      stream.on('error', onWriteError);
      try {
        stream.write(text, (err) => done(err));
      } catch (err) {
        done(err instanceof Error ? err : new Error(String(err)));
      }
    });

  const send = async (batch: SinkBatch): Promise<SendOutcome> => {
    if (closing !== undefined) return { status: 'retry', error: 'the stdout sink is closed' };
    const text = ndjsonBytes(batchChunks(batch));
    if (text.length === 0) return { status: 'ok' };
    const broken = (stream as { destroyed?: boolean }).destroyed === true ? (lastError ?? new Error('standard output is closed')) : undefined;
    const err = broken ?? (await write(text));
    if (err === undefined) return { status: 'ok' };
    logError(err);
    return { status: 'retry', afterMs: RETRY_AFTER_MS, error: describeError(err) };
  };

  return {
    // stdout has no receiver that could recognise a re-sent batch
    stableBatchIds: false,
    async healthcheck() {
      const destroyed = (stream as { destroyed?: boolean }).destroyed === true;
      return destroyed ? { ok: false, detail: `standard output is closed${lastError ? `: ${describeError(lastError)}` : ''}` } : { ok: true };
    },
    send(batch: SinkBatch, signal: AbortSignal): Promise<SendOutcome> {
      if (signal.aborted) return Promise.resolve({ status: 'retry', error: 'aborted' });
      const run = chain.then(() => send(batch));
      // The chain only orders the writes; the caller of `run` gets its failure.
      chain = run.catch(() => undefined);
      return run;
    },
    async flush() {
      await chain;
    },
    close() {
      closing ??= (async () => {
        await chain;
        stream.off('error', onError);
      })();
      return closing;
    },
  };
}
