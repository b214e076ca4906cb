import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { probeTcp } from '../../src/net/probe.js';

describe('probeTcp', () => {
  it('says a listening port is reachable and a closed one is not, naming why', async () => {
    const server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const url = new URL(`http://127.0.0.1:${port}/v1/logs`);
    expect(await probeTcp(url, 2_000)).toEqual({ ok: true, detail: `127.0.0.1:${port} reachable` });
    await new Promise<void>((r) => server.close(() => r()));
    const down = await probeTcp(url, 2_000);
    expect(down.ok).toBe(false);
    expect(down.detail).toContain('ECONNREFUSED');
  });
});
