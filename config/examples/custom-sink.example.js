//! An example custom sink for `type: module`: appends each batch as NDJSON to the file
//! named in `options.path`. Copy it, point `path:` of a module sink at it, and adapt.
//!
//! The daemon calls the default export once with the sink's `options` block and a
//! context (`{ name, state, now, logger, commitState, checkOnly }`), and then uses the
//! returned object:
//!   healthcheck()        → { ok, detail? }            informational only
//!   send(batch, signal)  → { status: 'ok' }           delivered (acknowledged)
//!                        | { status: 'retry', error, afterMs? }   try the same batch again
//!                        | { status: 'reject', error }            never deliverable: dead-letter
//!   flush()              make everything sent so far durable
//!   close()              release resources; idempotent
//! Return outcomes; throw only for bugs. With `context.checkOnly` (`mls validate
//! --check-sinks`) the sink is only asked for its healthcheck, then closed: create nothing.
import { constants } from 'node:fs';
import { access, open } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * @param {{ path?: string }} options
 * @param {{ name: string, checkOnly?: boolean, logger: { info(obj: object, msg?: string): void } }} context
 */
export default async function createSink(options, context) {
  const file = options?.path;
  if (typeof file !== 'string' || file === '') {
    throw new Error(`sink ${context.name}: options.path must name the output file`);
  }
  if (context.checkOnly) return checkOnlySink(file);
  const handle = await open(file, 'a', 0o600);
  let closing;

  return {
    async healthcheck() {
      return { ok: closing === undefined };
    },

    async send(batch, signal) {
      if (signal?.aborted) return { status: 'retry', error: 'aborted' };
      const lines = batch.entries.map((e) =>
        JSON.stringify({ seq: e.seq, model_id: e.modelId, time: e.time, stream: e.stream, log: e.log }),
      );
      try {
        await handle.appendFile(lines.join('\n') + '\n');
      } catch (err) {
        return { status: 'retry', error: `cannot write ${file}: ${err.message}` };
      }
      return { status: 'ok' };
    },

    async flush() {
      await handle.sync();
    },

    close() {
      closing ??= handle.sync().finally(() => handle.close());
      return closing;
    },
  };
}

/** A sink that only says whether `file` could be written, and writes nothing. */
function checkOnlySink(file) {
  const closed = Promise.resolve();
  return {
    async healthcheck() {
      try {
        await access(dirname(file), constants.W_OK);
        return { ok: true, detail: `${dirname(file)} is writable` };
      } catch (err) {
        return { ok: false, detail: `cannot write to ${dirname(file)}: ${err.message}` };
      }
    },
    async send() {
      return { status: 'retry', error: 'this sink was built for a check and writes nothing' };
    },
    async flush() {},
    close() {
      return closed;
    },
  };
}
