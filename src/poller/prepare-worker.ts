//! The thread that prepares pages for the pollers (see prepare-pool.ts): it computes the
//! times and hashes of a scanned body's entries and renders all their journal lines, and
//! hands the arrays back without copying them.
import { parentPort } from 'node:worker_threads';
import type { ScannedLogs } from '../api/logs-scan.js';
import { prepareScanned, type ScannedPage } from './prepare.js';
import type { PrepareReply, PrepareRequest } from './prepare-pool.js';

const port = parentPort;
if (!port) throw new Error('prepare-worker.js runs as a worker thread');

port.on('message', (m: PrepareRequest) => {
  try {
    const scan: ScannedLogs = { body: Buffer.from(m.body.buffer, m.body.byteOffset, m.body.byteLength), spans: m.spans, kinds: m.kinds, count: m.count, nextToken: undefined };
    const { page, badTimes, badExample } = prepareScanned(scan, m.windowFromMs);
    const all = new Uint32Array(m.count);
    for (let i = 0; i < m.count; i++) all[i] = i;
    const { lines, ends } = (page as ScannedPage).renderLines(m.modelId, all, m.count, true);
    const reply: PrepareReply = { id: m.id, timesNs: page.timesNs, hashes: page.hashes, lines, ends, badTimes, badExample };
    // Each has an ArrayBuffer of its own (lines: never Node.js's shared pool), moved, not copied.
    port.postMessage(reply, [page.timesNs.buffer, page.hashes.buffer, lines.buffer, ends.buffer] as ArrayBuffer[]);
  } catch (err) {
    port.postMessage({ id: m.id, error: String((err as Error)?.stack ?? err) } satisfies PrepareReply);
  }
});
