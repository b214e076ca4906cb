//! The committed JSON Schema of the config file matches the zod schema, and documents every key.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { configJsonSchema } from '../../src/cli/config.js';

const schemaFile = fileURLToPath(new URL('../../config/mls.schema.json', import.meta.url));
const REGENERATE = 'UPDATE_SCHEMA=1 npx vitest run test/config/json-schema.test.ts';

test('config/mls.schema.json is up to date with the schema', () => {
  const expected = `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
  if (process.env.UPDATE_SCHEMA === '1') writeFileSync(schemaFile, expected);
  let actual = '';
  try {
    actual = readFileSync(schemaFile, 'utf8');
  } catch {
    // reported by the assertion below
  }
  expect(actual === expected, `config/mls.schema.json is out of date; regenerate it with: ${REGENERATE}`).toBe(true);
});

test('every key of the config file has a description', () => {
  const undocumented: string[] = [];
  const walk = (node: unknown, where: string): void => {
    if (node === null || typeof node !== 'object') return;
    const n = node as Record<string, unknown>;
    if (n.properties && typeof n.properties === 'object') {
      for (const [key, prop] of Object.entries(n.properties as Record<string, Record<string, unknown>>)) {
        if (typeof prop.description !== 'string' || prop.description.length < 10) undocumented.push(`${where}.${key}`);
        walk(prop, `${where}.${key}`);
      }
    }
    for (const k of ['items', 'oneOf', 'anyOf'] as const) {
      const v = n[k];
      if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${where}.${k}[${i}]`));
      else if (v) walk(v, `${where}[]`);
    }
  };
  walk(configJsonSchema(), '');
  expect(undocumented).toEqual([]);
});

test('the schema rejects unknown keys and requires api, sinks, and models or models_file', () => {
  const schema = configJsonSchema();
  expect(schema.additionalProperties).toBe(false);
  expect(schema.required).toEqual(['api', 'sinks']);
  expect(schema.anyOf).toEqual([{ required: ['models'] }, { required: ['models_file'] }]);
});
