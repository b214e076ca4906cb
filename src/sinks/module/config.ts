//! The config block of a sink loaded from a JavaScript module.
import { z } from 'zod';
import { duration, mark, sinkFields, text, REQUEST_BATCHES } from '../../config/index.js';

/** The schema of a `type: module` block. */
export const moduleSinkSchema = z
  .strictObject({
    type: z.literal('module').describe('Loads a sink from a JavaScript module.'),
    ...sinkFields(REQUEST_BATCHES),
    path: mark(
      text(
        'ES module whose default export (or `createSink` export) builds the sink. A path starting with . or / is a file, resolved against the directory of the config file; anything else is a package name.',
      ),
      { path: 'module' },
    ),
    options: z.record(z.string(), z.unknown()).default({}).describe('Free-form options passed to the module. String options under keys that name a secret (token, api_key, password, client_secret, authorization, credential…, at any depth) and values of ${VAR}s named like one are scrubbed from every log line, error and status, like the secret fields of built-in sinks; values under 8 characters are not.'),
    timeout: duration(
      'Longest one call of the module may take. A send still running after it counts as a retry (the AbortSignal passed to send fires, whether or not the module heeds it); a flush or close (at reload or shutdown) is waited for no longer.',
      { positive: true },
    ).prefault('30s'),
  })
  .describe('Custom module sink.');

/** A `type: module` sink block, parsed. */
export type ModuleSinkConfig = z.output<typeof moduleSinkSchema>;

declare module '../../config/schema.js' {
  interface SinkConfigs {
    module: ModuleSinkConfig;
  }
}
