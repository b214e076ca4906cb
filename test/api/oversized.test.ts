// A response far larger than max_response_bytes, streamed slowly and never finished, is
// refused as soon as it passes the limit: the client closes the connection early and does
// not hold the body in memory.
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { ApiResponseTooLargeError } from '../../src/api/errors.js';
import type { ApiClient } from '../../src/api/types.js';
import { startServer, TOKEN, type TestServer } from './helpers.js';

const MiB = 1024 * 1024;
const BODY_BYTES = 50 * MiB;
const LIMIT = 1 * MiB;
const CHUNK = 64 * 1024;

let server: TestServer | undefined;
let client: ApiClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
});

describe('a response far over the size limit', () => {
  it('is refused at the limit without buffering it: the connection closes early and memory stays flat', { timeout: 30_000 }, async () => {
    let written = 0;
    let closedAt: number | undefined;
    const chunk = Buffer.alloc(CHUNK, 0x78); // "xxxx…" inside an endless log line
    server = await startServer(async (_req, res) => {
      res.on('close', () => (closedAt = written));
      // No Content-Length: the client can only find out by reading.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"status":"success","details":[{"time":"2024-05-01T12:00:00Z","stream":"stdout","log":"');
      while (written < BODY_BYTES && !res.destroyed) {
        const more = res.write(chunk);
        written += CHUNK;
        if (!more) {
          await new Promise<void>((resolve) => {
            const done = () => {
              res.off('drain', done).off('close', done);
              resolve();
            };
            res.on('drain', done).on('close', done);
          });
        }
        await new Promise((r) => setTimeout(r, 1)); // slowly
      }
      // never finished: the closing `"}]}` is not sent
    });
    client = createApiClient({
      baseUrl: server.url,
      token: TOKEN,
      maxResponseBytes: LIMIT,
      timeouts: { connectMs: 2000, headersMs: 5000, bodyMs: 5000 },
      retry: { deadlineMs: 3000, baseDelayMs: 10_000, maxDelayMs: 10_000 },
      random: () => 0.99, // one attempt: the first backoff already ends past the deadline
    });

    const mem = () => {
      const m = process.memoryUsage();
      return m.heapUsed + m.arrayBuffers;
    };
    const base = mem();
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, mem())), 2);
    const started = performance.now();
    let error: unknown;
    try {
      await client.getLogs({ modelId: 'm', fromMs: 0, toMs: 1 });
    } catch (err) {
      error = err;
    } finally {
      clearInterval(sampler);
    }
    const elapsed = performance.now() - started;
    peak = Math.max(peak, mem());
    await new Promise((r) => setTimeout(r, 100));

    expect(error).toBeInstanceOf(ApiResponseTooLargeError);
    expect((error as ApiResponseTooLargeError).code).toBe('MLS_ERR_API_TOO_LARGE');
    expect((error as Error).message).toMatch(/1 ?MiB|1048576/);
    expect(closedAt, 'the server saw the connection closed').toBeDefined();
    // the client stopped within a few chunks (plus socket buffers) of the limit
    expect(closedAt!).toBeLessThan(8 * MiB);
    expect(server.requests).toHaveLength(1);
    const grewBy = peak - base;
    console.log(
      `oversized response: limit ${LIMIT} bytes; server wrote ${(closedAt! / MiB).toFixed(1)} MiB of ${BODY_BYTES / MiB} MiB before the client closed; ` +
        `memory grew by at most ${(grewBy / MiB).toFixed(1)} MiB; refused after ${Math.round(elapsed)} ms`,
    );
    expect(grewBy).toBeLessThan(16 * MiB);
  });
});
