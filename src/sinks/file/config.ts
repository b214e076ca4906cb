//! The file sink's config block.
import { z } from 'zod';
import { Fail, duration, leaf, mark, parseFileModeValue, show, size, sinkFields, WRITE_BATCHES } from '../../config/index.js';
import { validateTemplate } from './template.js';

/** The path template, checked when the config is loaded; resolved against the config's folder. */
const pathTemplate = mark(
  leaf<string>(
    'File path template: {model_id} and the UTC strftime parts %Y %m %d %H %M %S %j (%% = a literal %). E.g. ./out/{model_id}/%Y-%m-%d.ndjson. Relative paths are resolved against the directory of the config file.',
    { type: 'string', minLength: 1 },
    (v) => {
      if (typeof v !== 'string' || v.trim() === '') return new Fail(`expected a non-empty string, got ${show(v)}`);
      const problem = validateTemplate(v);
      return problem ? new Fail(problem) : v;
    },
  ),
  { path: 'file' },
);

/** Permissions as a quoted octal string (`"0640"`). */
const octalMode = (description: string) => leaf<number>(description, { type: 'string', pattern: '^(0o|0)?[0-7]{3,4}$' }, parseFileModeValue);

/** The schema of a `type: file` block. */
export const fileSinkSchema = z
  .strictObject({
    type: z.literal('file').describe('Appends NDJSON to local files.'),
    ...sinkFields(WRITE_BATCHES),
    path: pathTemplate,
    fsync: z
      .enum(['always', 'batch', 'never'])
      .default('batch')
      .describe('When to fsync: after every write (`always`), before a batch is acknowledged (`batch`), or never (the OS decides).'),
    rotate: z
      .strictObject({
        max_bytes: size('Start a new file when the current one reaches this size.', { positive: true }).optional(),
        max_age: duration('Start a new file when the current one is this old.', { positive: true }).optional(),
      })
      .optional()
      .describe('Rotation within one rendered path; rotated files get a numbered suffix.'),
    compress: z.enum(['none', 'gzip']).default('none').describe('Compression of rotated files.'),
    file_mode: octalMode('Permissions of created files, as a quoted octal string.').prefault('0600'),
    dir_mode: octalMode('Permissions of created directories, as a quoted octal string.').prefault('0700'),
  })
  .describe('File sink.');

/** A `type: file` sink block, parsed. */
export type FileSinkConfig = z.output<typeof fileSinkSchema>;

declare module '../../config/schema.js' {
  interface SinkConfigs {
    file: FileSinkConfig;
  }
}
