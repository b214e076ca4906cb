//! Filters: drop rules on the text and a minimum level; records without a level pass the level check.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compileFilter, type FilterDecision } from '../../src/processing/filter.js';
import { LEVELS, type Level } from '../../src/processing/types.js';

const filter = compileFilter({
  drop: [{ match: String.raw`"GET /(?:health|metrics) HTTP/1\.[01]" 200` }, { match: '^DEBUG:urllib3' }],
  minLevel: 'info',
});

const cases: Array<[string, string, Level | undefined, FilterDecision]> = [
  ['health check access log', 'INFO:     10.0.0.3:5012 - "GET /health HTTP/1.1" 200 OK', 'info', { drop: 'match' }],
  ['metrics scrape', 'INFO:     10.0.0.9:7001 - "GET /metrics HTTP/1.0" 200 OK', undefined, { drop: 'match' }],
  ['failed health check is kept', 'INFO:     10.0.0.3:5012 - "GET /health HTTP/1.1" 503 Service Unavailable', 'info', 'keep'],
  ['generation request', 'INFO:     10.0.0.3:5012 - "POST /generate HTTP/1.1" 200 OK', 'info', 'keep'],
  ['debug line below minLevel', 'DEBUG 03-02 10:15:00 scheduler.py:120] preempted 2 seqs', 'debug', { drop: 'level' }],
  ['trace line below minLevel', 'TRACE tokenizer: cache hit', 'trace', { drop: 'level' }],
  ['no level: kept by minLevel', '  File "/app/server.py", line 88, in generate', undefined, 'keep'],
  ['warning above minLevel', 'WARNING: torch.compile fell back to eager', 'warn', 'keep'],
  ['fatal', 'CRITICAL: engine died', 'fatal', 'keep'],
  ['both reasons: level reported', 'DEBUG:urllib3.connectionpool:Starting new HTTPS connection', 'debug', { drop: 'level' }],
  ['anchored pattern only at the start', 'note: DEBUG:urllib3 mentioned mid-line', 'info', 'keep'],
  ['pattern matches without a level', 'DEBUG:urllib3.connectionpool:https://huggingface.co:443 "HEAD /x HTTP/1.1" 200 0', undefined, { drop: 'match' }],
];

describe('compileFilter', () => {
  it.each(cases)('%s', (_name, log, level, expected) => {
    expect(filter({ log, level })).toEqual(expected);
  });

  it('keeps everything with no options', () => {
    const all = compileFilter();
    fc.assert(fc.property(fc.string(), fc.option(fc.constantFrom(...LEVELS), { nil: undefined }), (log, level) => all({ log, level }) === 'keep'));
  });

  it('drops by level exactly the levels ranked below minLevel', () => {
    for (const min of LEVELS) {
      const f = compileFilter({ minLevel: min });
      const kept = LEVELS.filter((level) => f({ log: 'x', level }) === 'keep');
      expect(kept).toEqual(LEVELS.slice(LEVELS.indexOf(min)));
    }
  });

  it('is case-sensitive', () => {
    expect(compileFilter({ drop: [{ match: 'health' }] })({ log: 'HEALTH', level: undefined })).toBe('keep');
  });

  it.each([
    [{ drop: [{ match: 'ok' }, { match: '[' }] }, /drop\[1\]\.match: pattern "\[" cannot be used: missing closing \]/],
    [{ drop: [{ match: '' }] }, /drop\[0\]\.match: pattern "" cannot be used: it matches the empty string/],
    [{ minLevel: 'warning' as Level }, /minLevel: expected one of trace, debug, info, warn, error, fatal, got "warning"/],
  ])('rejects invalid options with a message naming them (%j)', (options, message) => {
    expect(() => compileFilter(options)).toThrow(message);
  });
});
