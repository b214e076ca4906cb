import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { MAX_ALIAS_EXPANSION, readYaml, YamlSyntaxError } from '../../src/config/yaml.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** What the `yaml` library (YAML 1.2 core schema, merge keys on) makes of a one-document text. */
function reference(text: string): unknown {
  const docs = parseAllDocuments(text, { merge: true, uniqueKeys: true });
  if (!Array.isArray(docs)) return undefined;
  expect(docs, text).toHaveLength(1);
  expect(docs[0]!.errors, text).toEqual([]);
  return docs[0]!.toJS({ maxAliasCount: -1 });
}

function syntaxError(text: string): YamlSyntaxError {
  try {
    readYaml(text);
  } catch (err) {
    expect(err).toBeInstanceOf(YamlSyntaxError);
    return err as YamlSyntaxError;
  }
  throw new Error(`no error for ${JSON.stringify(text)}`);
}

describe('readYaml', () => {
  const shipped = ['config/examples', 'config/compose', 'deploy/kubernetes']
    .flatMap((d) => readdirSync(path.join(root, d)).filter((f) => f.endsWith('.yaml')).map((f) => path.join(d, f)));

  test.each(shipped)('reads %s as the yaml library does', (file) => {
    const text = readFileSync(path.join(root, file), 'utf8');
    expect(readYaml(text).value).toEqual(reference(text));
  });

  const scalars = [
    'now', '2026-01-01T00:00:00Z', '10s', '1200/s', '0644', '0o644', '0x1F', '0b101', '1_000', '1e3', '-.5', '+12', '.inf', '-.INF',
    '.nan', 'true', 'True', 'TRUE', 'yes', 'on', 'off', 'no', 'y', 'null', 'Null', '~', '', '"quoted"', "'it''s'", '"\\u00e9\\t"',
    '!!str 5', '!!int "7"', '[a, 1, null]', '{a: 1, b: [2]}', '|\n  two\n  lines\n', '>-\n  folded\n  text\n', '"${VAR:-x}"', '12:30',
  ];
  test.each(scalars)('reads the value %j as the yaml library does', (scalar) => {
    const text = `k: ${scalar}\n`;
    expect(readYaml(text).value).toEqual(reference(text));
  });

  test('merge keys copy the anchored mapping, the entry winning', () => {
    const text = 'base: &b { type: webhook, timeout: 5s }\nsinks:\n  - { <<: *b, name: one }\n  - { <<: *b, name: two, timeout: 7s }\n';
    expect(readYaml(text).value).toEqual(reference(text));
    expect((readYaml(text).value as { sinks: unknown[] }).sinks[1]).toEqual({ type: 'webhook', timeout: '7s', name: 'two' });
  });

  test('an empty text, or only comments, holds no document; `---` alone holds null', () => {
    expect(readYaml('').value).toBeUndefined();
    expect(readYaml('# nothing here\n\n').value).toBeUndefined();
    expect(readYaml('---\n').value).toBeNull();
  });

  test('syntax errors carry the line and column', () => {
    const e = syntaxError('api:\n  base_url: x\n settle: 2s\n');
    expect([e.line, e.column]).toEqual([3, 2]);
    expect(e.reason).toMatch(/indentation/);
    expect(e.message).toBe(`line 3, column 2: ${e.reason}`);
    expect(syntaxError('a: 1\nb: 2\na: 3\n').line).toBe(3);
    expect(syntaxError('a:\n\tb: 1\n').reason).toMatch(/tab/);
  });

  test('a byte order mark and CRLF line ends are read as the same text without them', () => {
    const doc = readYaml('\uFEFFa: 1\r\nb:\r\n  - x\r\n  -\r\n  - z\r\n');
    expect(doc.value).toEqual({ a: 1, b: ['x', null, 'z'] });
    expect([doc.lineOf(['b', 1]), doc.lineOf(['b', 2])]).toEqual([4, 5]);
    expect(syntaxError('a: 1\r\n  b: 2\r\n').line).toBe(2);
  });

  test('nesting deeper than 100 collections is refused with its place', () => {
    const e = syntaxError(`a: ${'['.repeat(150)}${']'.repeat(150)}\n`);
    expect([e.line, e.reason]).toEqual([1, expect.stringMatching(/depth/i)]);
  });

  test('two documents are refused', () => {
    expect(syntaxError('a: 1\n---\nb: 2\n').reason).toMatch(/2 YAML documents/);
  });

  test('tags outside the core schema are refused, not read as text', () => {
    expect(syntaxError('k: !!binary aGk=\n').reason).toMatch(/unknown/);
    expect(syntaxError('k: !custom 1\n').line).toBe(1);
  });

  test('an alias bomb is refused before anything walks it; ordinary aliases are read', () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(10).fill(`*${prev}`).join(', ')}]`);
    }
    const e = syntaxError(`${levels.join('\n')}\n`);
    expect(e.line).toBeUndefined();
    expect(e.reason).toMatch(/more than a million values/);
    expect(MAX_ALIAS_EXPANSION).toBe(1_000_000);
    // Four levels expand to 10,000 values: well under the bound.
    expect((readYaml(`${levels.slice(0, 4).join('\n')}\n`).value as { d: unknown[] }).d).toHaveLength(10);
  });

  test('an alias inside the collection it names is refused', () => {
    expect(syntaxError('a: &x [1, *x]\n').reason).toMatch(/contains it/);
    expect(syntaxError('a: &x { b: *x }\n').reason).toMatch(/contains it/);
  });

  test('many entries sharing one anchored block are read', () => {
    const text = `common: &c { a: 1, b: 2, c: 3 }\nmodels:\n${Array.from({ length: 20_000 }, (_, i) => `  - { id: m${i}, settings: *c }`).join('\n')}\n`;
    const value = readYaml(text).value as { models: { settings: unknown }[] };
    expect(value.models).toHaveLength(20_000);
    expect(value.models[19_999]!.settings).toEqual({ a: 1, b: 2, c: 3 });
  });

  describe('lineOf', () => {
    const text = [
      '# models', //                  1
      '- m1', //                      2
      '-', //                         3  (null)
      '- id: m2', //                  4
      '  # a comment', //             5
      '  start_at: &t "-1h"', //      6
      '  sinks: [a,', //              7
      '    b]', //                    8
      '- !!str 5', //                 9
      '- id: m3', //                 10
      '  settings:', //              11
      '  x: *t', //                  12
      '', //
    ].join('\n');
    const doc = readYaml(text);

    test('names the line of items, keys and nested values', () => {
      expect(doc.lineOf([])).toBe(2);
      expect([0, 1, 2, 3, 4].map((i) => doc.lineOf([i]))).toEqual([2, 3, 4, 9, 10]);
      expect(doc.lineOf([2, 'start_at'])).toBe(6);
      expect(doc.lineOf([2, 'sinks', 1])).toBe(8);
      expect(doc.lineOf([4, 'x'])).toBe(12);
    });

    test('an empty value is found on the line of its key', () => {
      expect(doc.lineOf([4, 'settings'])).toBe(11);
    });

    test('a path that goes past what exists stops at its deepest node', () => {
      expect(doc.lineOf([2, 'nope', 'deeper'])).toBe(4);
      expect(doc.lineOf([2, 'sinks', 7])).toBe(7);
      expect(doc.lineOf([0, 'id'])).toBe(2);
      expect(doc.lineOf([99])).toBe(2);
    });

    test('an empty document has no lines', () => {
      expect(readYaml('').lineOf([0])).toBeUndefined();
    });
  });
});
