//! `mls status` as a table: the sink counts and the journal figure say what they count.
import { describe, expect, it } from 'vitest';
import { renderStatus } from '../../src/cli/status.js';
import type { DaemonStatus } from '../../src/daemon/status.js';

const status: DaemonStatus = {
  installationId: '0b9c6f2e-8d41-4a7e-b3c5-5f1e2d7a9c40',
  models: [{ id: 'model-a', startMs: 0, watermarkMs: Date.UTC(2026, 10, 22, 10, 14, 58), lagSeconds: 2, window: undefined, lastError: undefined }],
  sinks: [
    { name: 'archive', type: 'file', cursor: 48211, backlogEntries: 0, deliveredEntries: 48211, droppedEntries: 0, deadLetters: 0, lastError: undefined, failingSeconds: undefined },
    { name: 'hook', type: 'webhook', cursor: 47900, backlogEntries: 311, deliveredEntries: 47900, droppedEntries: 0, deadLetters: 0, lastError: 'HTTP 503', failingSeconds: 30 },
  ],
  journal: { entries: 311, bytes: 61440, lastSeq: 48211 },
};

describe('mls status', () => {
  it('says that the sink counts and the journal figure are entries, and which entries', () => {
    const text = renderStatus(status, 'daemon at 127.0.0.1:9464');
    expect(text).toContain('hook     webhook  47900   311      47900      0        0             HTTP 503\n');
    expect(text).toContain('BACKLOG, DELIVERED and DROPPED count entries (log lines as the service returned them); processing may ship them as fewer records\n');
    expect(text).toContain('journal: 311 entries held until every sink has them (61440 bytes); 48211 entries journaled since the state file was made (last seq)\n');
  });
});
