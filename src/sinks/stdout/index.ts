//! The stdout sink: NDJSON lines on standard output, for piping into another tool.
//! A batch is acknowledged only once the stream has taken it, so a slow reader slows
//! delivery down instead of growing memory.
import PQueue from 'p-queue';
import type { Sink, SinkBatch, SinkContext, SendOutcome } from '../contract.js';
import { describeError } from '../../errors.js';
import { ndjsonBytes } from '../../records/ndjson.js';
import { LogThrottle } from '../../telemetry/log-throttle.js';
import { batchChunks } from '../batch-ndjson.js';

const RETRY_AFTER_MS = 5_000;
const ERROR_LOG_INTERVAL_MS = 60_000;

/**
 * Creates a sink writing to `stream` (standard output by default); `config` is its block,
 * which has no fields of its own. A failed write (a closed pipe, say) is logged at error
 * level (at most once a minute) and reported as `retry`.
 */
export function createStdoutSink(config: object, ctx: SinkContext, stream: NodeJS.WritableStream = process.stdout): Sink {
  let lastError: Error | undefined;
  let closing: Promise<void> | undefined;
  const queue = new PQueue({ concurrency: 1 });
  const errorLog = new LogThrottle(ERROR_LOG_INTERVAL_MS);
  // Without a listener, an EPIPE 'error' event would crash the process.
  const onError = (err: Error): void => {
    lastError = err;
  };
  stream.on('error', onError);
  const destroyed = (): boolean => (stream as { destroyed?: boolean }).destroyed === true;

  const write = (bytes: Buffer): Promise<Error | undefined> =>
    new Promise((resolve) => {
      try {
        stream.write(bytes, (err) => resolve(err ?? undefined));
      } catch (err) {
        // a stream that writes synchronously (stdout redirected to a file) throws its failure
        resolve(err instanceof Error ? err : new Error(String(err)));
      }
    });

  const send = async (batch: SinkBatch): Promise<SendOutcome> => {
    if (closing !== undefined) return { status: 'retry', error: 'the stdout sink is closed' };
    const bytes = ndjsonBytes(batchChunks(batch));
    if (bytes.length === 0) return { status: 'ok' };
    const err = destroyed() ? (lastError ?? new Error('standard output is closed')) : await write(bytes);
    if (err === undefined) return { status: 'ok' };
    const level = errorLog.take(performance.now()) ? 'error' : 'debug';
    ctx.logger[level]({ sink: ctx.name, code: (err as { code?: unknown }).code, err: describeError(err) }, 'Could not write to standard output; the batch will be retried.');
    return { status: 'retry', afterMs: RETRY_AFTER_MS, error: describeError(err) };
  };

  return {
    // stdout has no receiver that could recognise a re-sent batch
    stableBatchIds: false,
    async healthcheck() {
      return destroyed() ? { ok: false, detail: `standard output is closed${lastError ? `: ${describeError(lastError)}` : ''}` } : { ok: true };
    },
    send(batch: SinkBatch, signal: AbortSignal): Promise<SendOutcome> {
      if (signal.aborted) return Promise.resolve({ status: 'retry', error: 'aborted' });
      return queue.add(() => send(batch));
    },
    flush() {
      return queue.onIdle();
    },
    close() {
      closing ??= queue.onIdle().then(() => {
        stream.off('error', onError);
      });
      return closing;
    },
  };
}
