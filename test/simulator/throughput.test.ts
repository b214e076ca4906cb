//! Measures how many entries per second the simulator serves.
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.js';
import { TOKEN, iso } from './helpers.js';

const T0 = Date.parse('2024-05-01T12:00:00.000Z');

// The figure depends on the machine, so it is printed and not asserted.
describe('simulator throughput', () => {
  it('serves 1,000-entry pages over one keep-alive connection', async () => {
    const sim = await startSimulator({ token: TOKEN, models: ['m1'], ratePerSec: 2_000, historyMs: 150_000, pageSize: 1_000, seed: 1, clock: () => T0 });
    const agent = new Agent({ connections: 1 });
    try {
      const fetchAll = async (): Promise<{ entries: number; ms: number }> => {
        const t = performance.now();
        let token: string | undefined;
        let entries = 0;
        do {
          const res = await request(sim.url + '/rest/model/logs/get/', {
            method: 'POST',
            dispatcher: agent,
            headers: { 'content-type': 'application/json', authorization: TOKEN },
            body: JSON.stringify({ model_id: 'm1', time_from: iso(T0 - 150_000), time_to: iso(T0), ...(token ? { next_token: token } : {}) }),
          });
          const text = await res.body.text();
          // Counting entries and finding the token without a full parse keeps the client's cost low.
          entries += text.split('{"time"').length - 1;
          token = /"next_token":"([^"]+)"/.exec(text.slice(-300))?.[1];
        } while (token);
        return { entries, ms: performance.now() - t };
      };
      const cold = await fetchAll();
      const warm = await fetchAll();
      expect(cold.entries).toBe(sim.groundTruth('m1').length);
      expect(warm.entries).toBe(cold.entries);
      const rate = (r: { entries: number; ms: number }): number => Math.round((r.entries / r.ms) * 1000);
      console.log(`simulator throughput: ${rate(cold)} entries/s on first read (rendering), ${rate(warm)} entries/s cached (${warm.entries} entries, client in the same process)`);
    } finally {
      await agent.close();
      await sim.close();
    }
  }, 120_000);
});
