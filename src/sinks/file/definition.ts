//! The file sink as a sink type: its block, the check that no two file sinks can write one
//! file, and its factory.
import { defineSink } from '../definition.js';
import { fileSinkSchema, type FileSinkConfig } from './config.js';
import { fileOverlapProblems } from './overlap.js';

/** The `file` sink type. */
export const fileSink = defineSink<FileSinkConfig>({
  type: 'file',
  schema: fileSinkSchema,
  validate: (blocks, models) => fileOverlapProblems(blocks, models.map((m) => m.id)),
  async create(config, context) {
    const { createFileSink } = await import('./index.js');
    return createFileSink(config, context);
  },
});
