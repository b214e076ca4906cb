//! docs/configuration.md is what the generator writes from the schema and the example file,
//! and it names every key of the schema.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { configJsonSchema } from '../../src/cli/config.js';
import { exampleBlocks, REFERENCE_INTRO, renderReference } from '../../src/config/reference.js';

const docFile = fileURLToPath(new URL('../../docs/configuration.md', import.meta.url));
const exampleFile = fileURLToPath(new URL('../../config/examples/reference.yaml', import.meta.url));
const REGENERATE = 'UPDATE_REFERENCE=1 npx vitest run test/config/reference.test.ts';

const generated = () => renderReference(configJsonSchema(), exampleBlocks(readFileSync(exampleFile, 'utf8')), REFERENCE_INTRO);

test('docs/configuration.md is up to date with the schema', () => {
  const expected = generated();
  if (process.env.UPDATE_REFERENCE === '1') writeFileSync(docFile, expected);
  let actual = '';
  try {
    actual = readFileSync(docFile, 'utf8');
  } catch {
    // reported by the assertion below
  }
  expect(actual === expected, `docs/configuration.md is out of date; regenerate it with: ${REGENERATE}`).toBe(true);
});

test('names every key of the schema, each sink type, and shows an example of each section and sink type', () => {
  const doc = generated();
  const schema = configJsonSchema() as { properties: Record<string, { properties?: Record<string, unknown>; items?: { oneOf?: Array<{ properties: Record<string, { const?: string }> }> } }> };
  for (const [key, node] of Object.entries(schema.properties)) {
    expect(doc, key).toContain(`## ${key}\n`);
    if (key === 'model_defaults') continue; // the keys of models[]
    for (const sub of Object.keys(node.properties ?? {})) expect(doc, `${key}.${sub}`).toContain(`| \`${key}.${sub}\` |`);
  }
  for (const type of schema.properties.sinks!.items!.oneOf!) {
    const name = type.properties.type!.const!;
    expect(doc).toContain(`### Sink type \`${name}\``);
    for (const key of Object.keys(type.properties)) if (key !== 'type') expect(doc, `sinks[].${key}`).toContain(`| \`sinks[].${key}\` |`);
    expect(doc, `an example of ${name}`).toMatch(new RegExp(`### Sink type \`${name}\`[^#]*\`\`\`yaml\\nsinks:\\n  - name: \\w+\\n    type: ${name}\\n`));
  }
  // A row gives the type and the default as the schema has them.
  expect(doc).toContain('| `poll.interval` | duration | `10s` |');
  expect(doc).toContain('| `api.base_url` | URL | required |');
  expect(doc).toContain('| `buffer.when_full` | `block` \\| `drop_oldest` | `block` |');
});
