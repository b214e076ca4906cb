//! The client under test in the api client's test files: servers and clients made here are
//! closed after each test (register {@link closeAfterEach} in the file).
import { afterEach, expect } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import type { ApiClientOptions } from '../../src/api/client-options.js';
import type { ApiClient } from '../../src/api/types.js';
import { startServer, TOKEN, type Handler, type TestServer } from './helpers.js';

export const ENTRY = { time: '2024-05-01T12:00:00.123456789Z', log: 'hello', stream: 'stdout' };
export const REQ = { modelId: 'm-1', fromMs: Date.UTC(2024, 4, 1, 12), toMs: Date.UTC(2024, 4, 1, 12, 5) };

let servers: TestServer[] = [];
let clients: ApiClient[] = [];

/** Closes the clients and servers of each test after it. */
export function closeAfterEach(): void {
  afterEach(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
    clients = [];
  });
}

/** A test server with `handler`, closed after the test. */
export async function serve(handler: Handler): Promise<TestServer> {
  const s = await startServer(handler);
  servers.push(s);
  return s;
}

/** One attempt only: the first backoff already ends past the deadline. */
export const ONE_ATTEMPT: Partial<ApiClientOptions> = { retry: { deadlineMs: 2000, baseDelayMs: 10_000, maxDelayMs: 10_000 }, random: () => 0.99 };

/** A client of `baseUrl` with short timeouts and retries, closed after the test. */
export function client(baseUrl: string, extra: Partial<ApiClientOptions> = {}): ApiClient {
  const c = createApiClient({
    baseUrl,
    token: TOKEN,
    timeouts: { connectMs: 1000, headersMs: 2000, bodyMs: 2000 },
    retry: { deadlineMs: 3000, baseDelayMs: 10, maxDelayMs: 50 },
    ...extra,
  });
  clients.push(c);
  return c;
}

/** Waits up to 5 s for `check` to hold. */
export async function waitUntil(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

/** Fails if the token shows in the error, its causes or `more`. */
export function expectNoToken(err: unknown, ...more: string[]): void {
  const texts = [String(err), (err as Error).message, JSON.stringify(err), (err as Error).stack ?? '', ...more];
  for (let cur = (err as { cause?: unknown }).cause; cur instanceof Error; cur = (cur as { cause?: unknown }).cause) texts.push(cur.message);
  for (const t of texts) expect(t).not.toContain(TOKEN);
}
