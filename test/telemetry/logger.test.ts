// The daemon's log lines carry each key once, whatever the bindings of the logger and the
// fields of the call: strict JSON pipelines reject a line with a repeated key.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/telemetry/logger.js';
import { registerSecret } from '../../src/telemetry/secrets.js';
import { Capture } from '../api/helpers.js';
import { duplicateKeys } from '../helpers/strict-json.js';

function capture(): { out: Capture; lines: () => Array<Record<string, unknown>>; raw: () => string[] } {
  const out = new Capture();
  const raw = () => out.text.split('\n').filter(Boolean);
  return { out, raw, lines: () => raw().map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('log lines', () => {
  it('write a field once when the call passes again what the child logger is bound to', () => {
    const c = capture();
    const root = createLogger({ destination: c.out, level: 'debug' });
    const sinkLog = root.child({ component: 'sink', sink: 'hook' });
    const pollLog = root.child({ component: 'poller', model: 'm-1' });
    sinkLog.warn({ sink: 'hook', attempts: 2 }, 'sink send failed; retrying');
    pollLog.error({ model: 'm-1', status: 400, err: 'bad request' }, 'the service rejected the logs request');
    sinkLog.info({ sink: 'hook' }, 'only the bound field');
    for (const line of c.raw()) expect(duplicateKeys(line), line).toEqual([]);
    expect(c.lines()).toMatchObject([
      { component: 'sink', sink: 'hook', attempts: 2, msg: 'sink send failed; retrying' },
      { component: 'poller', model: 'm-1', status: 400, err: 'bad request' },
      { component: 'sink', sink: 'hook', msg: 'only the bound field' },
    ]);
  });

  it("write the call's value, once, when it differs from the binding; the binding is back for the next line", () => {
    const c = capture();
    const log = createLogger({ destination: c.out }).child({ component: 'sink', sink: 'hook' });
    log.info({ sink: 'other', n: 1 }, 'about another sink');
    log.info({ n: 2 }, 'about this one');
    for (const line of c.raw()) expect(duplicateKeys(line), line).toEqual([]);
    expect(c.lines()).toMatchObject([
      { component: 'sink', sink: 'other', n: 1 },
      { component: 'sink', sink: 'hook', n: 2 },
    ]);
  });

  it("keep one copy of a key bound by a child and by its parent, with the child's value", () => {
    const c = capture();
    const log = createLogger({ destination: c.out }).child({ component: 'api' }).child({ component: 'sink', sink: 's' }).child({ sink: 's2' });
    log.info('nested');
    log.info({ sink: 's2', component: 'sink' }, 'nested, fields passed again');
    for (const line of c.raw()) expect(duplicateKeys(line), line).toEqual([]);
    expect(c.lines()).toMatchObject([
      { component: 'sink', sink: 's2', msg: 'nested' },
      { component: 'sink', sink: 's2', msg: 'nested, fields passed again' },
    ]);
  });

  it("write a field named like pino's own keys under another name rather than twice", () => {
    const c = capture();
    const log = createLogger({ destination: c.out });
    log.info({ time: '2025-01-01T00:00:00Z', level: 'ERROR', msg: 'from the entry' }, 'an entry');
    const [line] = c.raw();
    expect(duplicateKeys(line!)).toEqual([]);
    expect(JSON.parse(line!)).toMatchObject({ level: 'info', _time: '2025-01-01T00:00:00Z', _level: 'ERROR', _msg: 'from the entry', msg: 'an entry' });
  });

  it('scrub the message pino takes from an Error logged without one', () => {
    const secret = 'tok-LOGGER-ERR-5f3a9c';
    registerSecret(secret);
    const c = capture();
    const log = createLogger({ destination: c.out });
    log.error(new Error(`refused ${secret.toUpperCase()}`));
    log.error({ err: new Error(`refused ${secret}`) });
    expect(c.out.text).not.toMatch(new RegExp(secret, 'i'));
    expect(c.lines().map((l) => l.msg)).toEqual(['refused [REDACTED]', 'refused [REDACTED]']);
  });
});

describe('log lines for people', () => {
  it('are one readable line each with format pretty, scrubbed as JSON lines are', () => {
    const secret = 'tok-LOGGER-PRETTY-8d21e4';
    registerSecret(secret);
    const c = capture();
    const log = createLogger({ destination: c.out, format: 'pretty' }).child({ component: 'api' });
    log.warn({ model: 'm-1', attempt: 2, err: `refused ${secret}` }, `request failed; retrying with ${secret}`);
    log.info('mls daemon started');
    const lines = c.raw();
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: request failed; retrying with \[REDACTED\] \{"component":"api","model":"m-1","attempt":2\}$/);
    expect(c.out.text).toContain('err: "refused [REDACTED]"');
    expect(lines.at(-1)).toMatch(/INFO: mls daemon started {"component":"api"}$/);
    expect(c.out.text).not.toContain(secret);
    for (const line of lines) expect(line.startsWith('{')).toBe(false);
  });

  it('are pretty with format auto on a terminal, and JSON elsewhere or with format json', () => {
    const terminal = Object.assign(new Capture(), { isTTY: true });
    createLogger({ destination: terminal }).info('on a terminal');
    expect(terminal.text).toMatch(/INFO.*: .*on a terminal/);
    expect(terminal.text.startsWith('{')).toBe(false);
    const piped = capture();
    createLogger({ destination: piped.out, format: 'auto' }).info('into a pipe');
    expect(piped.lines()).toMatchObject([{ level: 'info', msg: 'into a pipe' }]);
    const forced = Object.assign(new Capture(), { isTTY: true });
    createLogger({ destination: forced, format: 'json' }).info('json on a terminal');
    expect(JSON.parse(forced.text)).toMatchObject({ msg: 'json on a terminal' });
  });
});

describe('the strict reader of the tests', () => {
  it('finds a key written twice, where JSON.parse keeps the last one', () => {
    expect(duplicateKeys('{"a":1,"b":{"c":[{"d":1,"d":2}]},"a":"x"}')).toEqual(['$.b.c[0].d', '$.a']);
    expect(duplicateKeys('{"a":"\\"a\\":1","b":[1,2.5e3,true,null]}')).toEqual([]);
  });
});
