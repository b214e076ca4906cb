//! Two file sinks that could write one file are refused: each would cut the file back to its
//! own committed offset at every start, losing the other's lines. The check is exact: it
//! finds a shared name whenever one exists (rotated and compressed names included), and
//! never refuses sinks whose files cannot meet.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/cli/config.js';
import { ConfigError } from '../../../src/errors.js';
import { DIGIT, DIGITS, commonName, findFileOverlaps, type FileSinkPaths, type Item } from '../../../src/sinks/file/overlap.js';

const BASE = '/etc/mls';

function sink(name: string, template: string, over: Partial<FileSinkPaths> = {}): FileSinkPaths {
  return { index: 0, name, template: path.resolve(BASE, template), models: ['m1', 'm2'], rotates: false, gzip: false, ...over };
}

function overlap(a: FileSinkPaths, b: FileSinkPaths): string | undefined {
  return findFileOverlaps([a, { ...b, index: 1 }])[0]?.example;
}

describe('file sink overlap', () => {
  it.each([
    ['the same template', 'out/{model_id}.ndjson', 'out/{model_id}.ndjson', '/etc/mls/out/m1.ndjson'],
    ['the same folder written two ways', './out/{model_id}.ndjson', 'logs/../out//{model_id}.ndjson', '/etc/mls/out/m1.ndjson'],
    ['a time code and a literal year', 'out/%Y.ndjson', 'out/2026.ndjson', '/etc/mls/out/2026.ndjson'],
    ['two time codes of one width', 'out/{model_id}-%m.ndjson', 'out/{model_id}-%H.ndjson', '/etc/mls/out/m1-00.ndjson'],
    ['a day of year and three literal digits', 'out/%j', 'out/123', '/etc/mls/out/123'],
    ['a literal percent sign', 'out/100%%.ndjson', 'out/1%m%%.ndjson', '/etc/mls/out/100%.ndjson'],
  ])('finds %s', (_, a, b, example) => {
    expect(overlap(sink('a', a), sink('b', b))).toBe(example);
  });

  it.each([
    ['different folders', 'a/{model_id}.ndjson', 'b/{model_id}.ndjson'],
    ['different lengths of digits', 'out/%Y.ndjson', 'out/%m.ndjson'],
    ['a letter where the other has a digit', 'out/%Y.ndjson', 'out/20a6.ndjson'],
    ['another extension', 'out/{model_id}.ndjson', 'out/{model_id}.json'],
  ])('accepts %s', (_, a, b) => {
    expect(overlap(sink('a', a), sink('b', b))).toBeUndefined();
  });

  it('considers only models each sink receives, across models too', () => {
    const a = sink('a', 'out/{model_id}.ndjson', { models: ['m1'] });
    expect(overlap(a, sink('b', 'out/{model_id}.ndjson', { models: ['m2'] }))).toBeUndefined();
    expect(overlap(a, sink('b', 'out/{model_id}.ndjson', { models: ['m1', 'm2'] }))).toBe('/etc/mls/out/m1.ndjson');
    // A sink of m2 whose fixed path is the file m1 gets from the other sink.
    expect(overlap(a, sink('b', 'out/m1.ndjson', { models: ['m2'] }))).toBe('/etc/mls/out/m1.ndjson');
    // Model ids are sanitised as the sink renders them.
    expect(overlap(sink('a', 'out/{model_id}.ndjson', { models: ['team/a'] }), sink('b', 'out/team_a.ndjson'))).toBe('/etc/mls/out/team_a.ndjson');
  });

  it('includes rotated names, with and without their counter, and their compressed names', () => {
    const rotating = { rotates: true };
    const stamped = 'out/m1.20261122T101500Z.ndjson';
    expect(overlap(sink('a', 'out/{model_id}.ndjson'), sink('b', stamped))).toBeUndefined();
    expect(overlap(sink('a', 'out/{model_id}.ndjson', rotating), sink('b', stamped))).toBe('/etc/mls/out/m1.20261122T101500Z.ndjson');
    expect(overlap(sink('a', 'out/{model_id}.ndjson', rotating), sink('b', 'out/m1.20261122T101500Z.17.ndjson'))).toBe('/etc/mls/out/m1.20261122T101500Z.17.ndjson');
    expect(overlap(sink('a', 'out/{model_id}.ndjson', rotating), sink('b', 'out/m1.%Y%m%dT%H%M%SZ.%d.ndjson'))).toBe('/etc/mls/out/m1.00000000T000000Z.00.ndjson');
    expect(overlap(sink('a', 'out/{model_id}.ndjson', rotating), sink('b', `${stamped}.gz`))).toBeUndefined();
    expect(overlap(sink('a', 'out/{model_id}.ndjson', { rotates: true, gzip: true }), sink('b', `${stamped}.gz`))).toBe(`/etc/mls/${stamped}.gz`);
    // The stamp goes before the last extension; a name without one gets it at the end.
    expect(overlap(sink('a', 'out/{model_id}', rotating), sink('b', 'out/m2.20261122T101500Z'))).toBe('/etc/mls/out/m2.20261122T101500Z');
    // Two rotating sinks of distinct files never meet through their rotated names.
    expect(overlap(sink('a', 'out/{model_id}.ndjson', rotating), sink('b', 'out/{model_id}.log', rotating))).toBeUndefined();
  });

  it('finds the one shared file among a thousand models per sink', () => {
    const models = Array.from({ length: 2000 }, (_, i) => `model-${i.toString(36)}-prod`);
    const hourly = sink('hourly', '/var/log/mls/%Y/{model_id}/%H.ndjson', { models: models.slice(0, 1000), rotates: true, gzip: true });
    const copies = sink('copies', '/var/log/mls/2026/{model_id}/%H.20261122T101500Z.ndjson.gz', { models: models.slice(999) });
    const started = performance.now();
    const [hit] = findFileOverlaps([hourly, { ...copies, index: 1 }]);
    console.log(`overlap check: 2 sinks of 1 000 models each (7 names per model) compared in ${Math.round(performance.now() - started)} ms`);
    expect(hit?.example).toBe('/var/log/mls/2026/model-rr-prod/00.20261122T101500Z.ndjson.gz');
    expect([hit?.firstShape.kind, hit?.firstShape.modelId, hit?.secondShape.modelId]).toEqual(['compressed rotated file', 'model-rr-prod', 'model-rr-prod']);
    expect(findFileOverlaps([hourly, { ...copies, index: 1, models: models.slice(1000) }])).toEqual([]);
  });

  it('agrees with an enumeration of every short name on random shapes', () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const alphabet = ['a', '1', '.'];
    const pieces: Item[] = [...alphabet, DIGIT, DIGITS];
    const shape = () => Array.from({ length: 1 + random(4) }, () => pieces[random(pieces.length)]!);
    const regex = (s: Item[]) => new RegExp(`^${s.map((x) => (x === DIGIT ? '[0-9]' : x === DIGITS ? '[0-9]+' : x === '.' ? '\\.' : x)).join('')}$`);
    const names: string[] = [''];
    for (let len = 1, layer = ['']; len <= 6; len++) {
      layer = layer.flatMap((p) => ['a', '1', '2', '.'].map((c) => p + c));
      names.push(...layer);
    }
    let met = 0;
    for (let k = 0; k < 400; k++) {
      const a = shape();
      const b = shape();
      const found = commonName(a, b);
      const both = names.find((n) => regex(a).test(n) && regex(b).test(n));
      if (found !== undefined) {
        met++;
        expect(regex(a).test(found) && regex(b).test(found), `${found} should match both`).toBe(true);
      } else {
        expect(both, `${JSON.stringify(a)} and ${JSON.stringify(b)} share ${both}`).toBeUndefined();
      }
    }
    console.log(`overlap check: ${met} of 400 random shape pairs share a name (each matched by both), ${400 - met} share none of the ${names.length} names of up to 6 characters`);
    expect(met).toBeGreaterThan(20);
  });

  it('is a config error naming both sinks, with an example file and the fix', () => {
    const raw = {
      api: { base_url: 'https://api.example.com', token: 'test-token' },
      models: [{ id: 'm1' }, { id: 'm2' }],
      sinks: [
        { name: 'archive', type: 'file', path: './out/{model_id}/%Y-%m-%d.ndjson' },
        { name: 'console', type: 'stdout' },
        { name: 'copy', type: 'file', path: 'out/m1/%Y-%m-%d.ndjson', models: ['m1'] },
      ],
    };
    let err: unknown;
    try {
      parseConfig(raw, { baseDir: BASE, env: {} });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems;
    expect(problems).toHaveLength(1);
    expect(problems[0]).toBe(
      'sinks[2].path: "/etc/mls/out/m1/%Y-%m-%d.ndjson" can name the same file as sinks[0].path "/etc/mls/out/{model_id}/%Y-%m-%d.ndjson", ' +
        'e.g. /etc/mls/out/m1/0000-00-00.ndjson (a file of sink copy for model m1, and a file of sink archive for model m1); ' +
        "each sink would cut the other's lines from it at every start. Give each file sink paths of its own (another folder or file name), or restrict their models so that no file is shared",
    );
    // Restricting the first sink to the other model resolves it.
    const fixed = { ...raw, sinks: [{ ...raw.sinks[0], models: ['m2'] }, raw.sinks[1], raw.sinks[2]] };
    expect(() => parseConfig(fixed, { baseDir: BASE, env: {} })).not.toThrow();
  });
});
