//! The control channel: a Unix socket only its user can open, one request per connection
//! answered with events and a result (or an error with its exit code), a stale socket of a
//! dead daemon replaced, and requests in progress stopped when the channel closes.
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { connectControl } from '../../src/control/client.js';
import { startControlServer, type ControlHandler } from '../../src/control/server.js';
import { MlsError, UsageError } from '../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'mls-ctl-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const logger = pino({ level: 'silent' });
const nothing: ControlHandler = async () => ({});

describe('control channel', () => {
  it('listens with mode 0600 and answers events, then the result; errors keep their code and exit code', async () => {
    const path = join(dir, 'a.sock');
    const server = await startControlServer({
      path,
      logger,
      handlers: {
        'settings.apply': async (args, emit) => {
          emit({ step: 1 });
          emit({ step: 2 });
          return { echoed: args };
        },
        'dlq.replay': async () => {
          throw new UsageError('no such sink');
        },
        'dlq.purge': nothing,
        tap: nothing,
      },
    });
    try {
      expect(statSync(path).mode & 0o777).toBe(0o600);
      const events: unknown[] = [];
      const conn = await connectControl(path, 1_000);
      expect(await conn.request('settings.apply', { x: 1 }, (e) => events.push(e))).toEqual({ echoed: { x: 1 } });
      expect(events).toEqual([{ step: 1 }, { step: 2 }]);
      const failing = await connectControl(path, 1_000);
      const err = await failing.request('dlq.replay', {}).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MlsError);
      expect(err).toMatchObject({ code: 'MLS_ERR_USAGE', exitCode: 2, message: 'no such sink' });
    } finally {
      await server.close();
    }
    await expect(connectControl(path, 0)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a request of another version or an unknown operation', async () => {
    const path = join(dir, 'b.sock');
    const server = await startControlServer({ path, logger, handlers: { 'settings.apply': nothing, 'dlq.replay': nothing, 'dlq.purge': nothing, tap: nothing } });
    try {
      const ask = (line: string) =>
        new Promise<string>((resolve) => {
          let text = '';
          const s = createConnection(path, () => s.write(`${line}\n`));
          s.setEncoding('utf8').on('data', (d: string) => (text += d));
          s.on('close', () => resolve(text));
        });
      expect(JSON.parse(await ask('{"v":99,"op":"dlq.purge","args":{}}'))).toMatchObject({ type: 'error', exitCode: 2, message: expect.stringContaining('version 99') });
      expect(JSON.parse(await ask('{"v":1,"op":"drop.tables","args":{}}'))).toMatchObject({ type: 'error', message: expect.stringContaining('unknown operation') });
      expect(JSON.parse(await ask('not json'))).toMatchObject({ type: 'error', message: expect.stringContaining('not JSON') });
    } finally {
      await server.close();
    }
  });

  it('replaces the socket a dead daemon left, refuses to remove a file that is not one', async () => {
    const path = join(dir, 'c.sock');
    // A socket file with nobody listening, as after kill -9.
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(path, r));
    (dead as unknown as { _handle: { close(): void } })._handle.close();
    const server = await startControlServer({ path, logger, handlers: { 'settings.apply': nothing, 'dlq.replay': nothing, 'dlq.purge': async () => ({ purged: 3 }), tap: nothing } });
    try {
      expect(await (await connectControl(path, 1_000)).request('dlq.purge', {})).toEqual({ purged: 3 });
    } finally {
      await server.close();
    }
    const file = join(dir, 'd.sock');
    writeFileSync(file, 'keep me');
    await expect(startControlServer({ path: file, logger, handlers: { 'settings.apply': nothing, 'dlq.replay': nothing, 'dlq.purge': nothing, tap: nothing } })).rejects.toThrow(/is not a socket/);
  });

  it('closing stops a request in progress through its signal, waits for it and passes its answer on', async () => {
    const path = join(dir, 'e.sock');
    let stopped = false;
    const server = await startControlServer({
      path,
      logger,
      handlers: {
        'settings.apply': (_args, emit, signal) =>
          new Promise((resolve) => {
            emit('started');
            signal.addEventListener('abort', () => {
              stopped = true;
              resolve({ stopped: true });
            });
          }),
        'dlq.replay': nothing,
        'dlq.purge': nothing,
        tap: nothing,
      },
    });
    const conn = await connectControl(path, 1_000);
    let started!: () => void;
    const isStarted = new Promise<void>((r) => (started = r));
    const answer = conn.request('settings.apply', {}, () => started());
    await isStarted;
    await server.close();
    expect(stopped).toBe(true);
    // What the stopped request says of itself still reaches the client.
    expect(await answer).toEqual({ stopped: true });
  });

  it('closing ends a client that connected and never sent a request, and one that sent half a line', async () => {
    const path = join(dir, 'f.sock');
    const server = await startControlServer({ path, logger, handlers: { 'settings.apply': nothing, 'dlq.replay': nothing, 'dlq.purge': nothing, tap: nothing } });
    const connect = (first: string) =>
      new Promise<{ answer: Promise<string> }>((resolve) => {
        let text = '';
        const s = createConnection(path, () => {
          if (first) s.write(first);
          resolve({ answer: new Promise((r) => s.on('close', () => r(text))) });
        });
        s.setEncoding('utf8').on('data', (d: string) => (text += d));
        s.on('error', () => {});
      });
    const idle = await connect('');
    const half = await connect('{"v":1,"op":');
    await new Promise((r) => setTimeout(r, 50));
    await server.close(); // without the fix, this waits for the clients for ever
    for (const client of [idle, half]) expect(JSON.parse(await client.answer)).toMatchObject({ type: 'error', message: expect.stringContaining('the daemon is stopping') });
  });

  it('holds a bounded amount for a client that does not read (emit says what it did not send), and closing is not held by it', async () => {
    const path = join(dir, 'g.sock');
    const sent: boolean[] = [];
    let flooded!: () => void;
    const isFlooded = new Promise<void>((r) => (flooded = r));
    const big = 'x'.repeat(64 * 1024);
    const server = await startControlServer({
      path,
      logger,
      handlers: {
        'settings.apply': nothing,
        'dlq.replay': nothing,
        'dlq.purge': nothing,
        tap: (_args, emit, signal) =>
          new Promise((resolve) => {
            // far more than a socket buffer and the bound together
            for (let i = 0; i < 200; i++) sent.push(emit(big));
            flooded();
            signal.addEventListener('abort', () => resolve({ dropped: sent.filter((x) => !x).length }));
          }),
      },
    });
    // connects, asks, and never reads a byte
    const stalled = createConnection(path, () => stalled.write('{"v":1,"op":"tap","args":{}}\n'));
    stalled.pause();
    stalled.on('error', () => {});
    await isFlooded;
    expect(sent.slice(0, 5)).toEqual([true, true, true, true, true]);
    expect(sent.filter((x) => !x).length).toBeGreaterThan(150);
    await server.close(); // without the cut, this waits for the client for ever
    stalled.destroy();
  });
});
