//! Path templates: every code, model id sanitising, rejected templates, the render cache.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.js';
import { compileTemplate, sanitizeModelId, validateTemplate } from '../../../src/sinks/file/template.js';

const at = (iso: string): number => Date.parse(iso);

describe('path templates', () => {
  it('renders every time code in UTC from the given instant', () => {
    const t = compileTemplate('/out/%Y/%m/%d/%H/%M/%S/%j/100%%.ndjson');
    expect(t.render('m', at('2024-02-29T13:04:05.678Z'))).toBe('/out/2024/02/29/13/04/05/060/100%.ndjson');
    expect(t.render('m', at('2024-12-31T23:59:59.999Z'))).toBe('/out/2024/12/31/23/59/59/366/100%.ndjson');
    expect(t.render('m', at('2026-01-01T00:00:00Z'))).toBe('/out/2026/01/01/00/00/00/001/100%.ndjson');
  });

  it('puts the sanitised model id in place of {model_id}', () => {
    const t = compileTemplate('/out/{model_id}/{model_id}.log');
    expect(t.render('org/model:v1', 0)).toBe('/out/org_model_v1/org_model_v1.log');
    expect(t.staticPrefix).toBe('/out/');
  });

  it.each([
    ['ok-1.2_X', 'ok-1.2_X'],
    ['a/b', 'a_b'],
    ['../etc', '.._etc'],
    ['..', '_'],
    ['.', '_'],
    ['', '_'],
    ['ünï cödé', '_n__c_d_'],
    ['a\u0000b', 'a_b'],
  ])('sanitises model id %j to %j', (id, expected) => {
    expect(sanitizeModelId(id)).toBe(expected);
  });

  it('renders a new path when the entry time moves to the next period, per model', () => {
    const t = compileTemplate('/o/{model_id}/%Y-%m-%dT%H.ndjson');
    expect(t.render('a', at('2026-11-22T10:59:59.999Z'))).toBe('/o/a/2026-11-22T10.ndjson');
    expect(t.render('b', at('2026-11-22T10:00:00Z'))).toBe('/o/b/2026-11-22T10.ndjson');
    expect(t.render('a', at('2026-11-22T11:00:00Z'))).toBe('/o/a/2026-11-22T11.ndjson');
    expect(t.render('a', at('2026-11-22T10:30:00Z'))).toBe('/o/a/2026-11-22T10.ndjson');
    expect(t.render('a', at('2026-11-23T10:30:00Z'))).toBe('/o/a/2026-11-23T10.ndjson');
  });

  it('renders a template without codes to the same path at any time', () => {
    const t = compileTemplate('/o/all.ndjson');
    expect(t.render('a', 0)).toBe('/o/all.ndjson');
    expect(t.render('b', at('2030-01-01T00:00:00Z'))).toBe('/o/all.ndjson');
  });

  it.each([
    ['/o/%Q.log', /unknown time code "%Q"/],
    ['/o/%y.log', /unknown time code "%y"/],
    ['/o/{model}.log', /unknown placeholder "\{model\}"/],
    ['/o/{model_id.log', /without its closing/],
    ['/o/x.log%', /lone "%"/],
    ['/o/%Y/', /must name a file/],
    ['', /empty/],
  ])('rejects %j, naming the problem', (t, message) => {
    expect(validateTemplate(t)).toMatch(message);
    expect(() => compileTemplate(t)).toThrow(ConfigError);
    expect(() => compileTemplate(t)).toThrow(message);
  });

  it('accepts every documented code', () => {
    expect(validateTemplate('/o/{model_id}/%Y%m%d%H%M%S%j%%')).toBeUndefined();
  });
});
