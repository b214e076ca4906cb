//! The stdout sink's config block.
import { z } from 'zod';
import { sinkFields, WRITE_BATCHES } from '../../config/index.js';

/** The schema of a `type: stdout` block. */
export const stdoutSinkSchema = z
  .strictObject({
    type: z.literal('stdout').describe('Writes NDJSON to standard output.'),
    ...sinkFields(WRITE_BATCHES),
  })
  .describe('Stdout sink.');

/** A `type: stdout` sink block, parsed. */
export type StdoutSinkConfig = z.output<typeof stdoutSinkSchema>;

declare module '../../config/schema.js' {
  interface SinkConfigs {
    stdout: StdoutSinkConfig;
  }
}
