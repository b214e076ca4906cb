//! `mls status --config F`: per-model checkpoints and per-sink cursors as a table. Asks
//! the running daemon's admin server when there is one, else reads the state file.
import type { Command } from 'commander';
import { configOption, textTable } from './common.js';
import { existsSync } from 'node:fs';
import type { DaemonStatus } from '../daemon/status.js';
import { StateError } from '../errors.js';
import { scrubSecrets } from '../telemetry/secrets.js';
import { formatDuration } from '../time/duration.js';

/** Adds `mls status`. */
export function register(program: Command): void {
  program
    .command('status')
    .description('show per-model checkpoints and per-sink cursors and backlogs')
    .addOption(configOption())
    .option('--json', 'print JSON instead of a table')
    .action(async (opts: { config: string; json?: boolean }) => {
      const [{ loadConfig }, { fetchStatus }] = await Promise.all([import('./config.js'), import('./status-fetch.js')]);
      const config = await loadConfig(opts.config);
      let status: DaemonStatus | undefined;
      let source = 'state file';
      if (config.admin) {
        // No daemon answering is the usual case when it is stopped: the state file is read instead, and the output says which source it used.
        status = await fetchStatus(config.admin.listen).catch(() => undefined);
        if (status) source = `daemon at ${config.admin.listen}`;
      }
      if (!status) {
        if (!existsSync(config.state.path)) throw new StateError('MLS_ERR_STATE_MISSING', `state file ${config.state.path} does not exist yet (the daemon has not run with this config)`);
        const [{ readStateFile }, { buildStatus }] = await Promise.all([import('../journal/reader.js'), import('../daemon/status.js')]);
        const scope = { models: config.models.map((m) => m.id), sinkTypes: new Map(config.sinks.map((s) => [s.name, s.type])) };
        status = readStateFile(config.state.path, (reader) => buildStatus(reader, Date.now(), scope))!;
      }
      process.stdout.write(scrubSecrets(opts.json ? `${JSON.stringify(status, null, 2)}\n` : renderStatus(status, source)));
    });
}

function iso(ms: number | undefined): string {
  return ms === undefined ? '-' : new Date(ms).toISOString();
}

/** Renders a status snapshot as aligned tables for a person. */
export function renderStatus(st: DaemonStatus, source: string): string {
  const models = st.models.map((m) => [m.id, iso(m.watermarkMs), formatDuration(m.lagSeconds * 1000), m.window ? `${iso(m.window.fromMs)} .. ${iso(m.window.toMs)}${m.window.hasToken ? ' (paging)' : ''}` : '-', m.lastError ?? '']);
  const sinks = st.sinks.map((s) => [s.name, s.type, String(s.cursor), String(s.backlogEntries), String(s.deliveredEntries), String(s.droppedEntries), String(s.deadLetters), s.lastError ?? '']);
  return (
    `source: ${source}\ninstallation: ${st.installationId ?? '- (the daemon has not opened this state file yet)'}\n\n` +
    textTable(['MODEL', 'WATERMARK', 'LAG', 'WINDOW IN PROGRESS', 'LAST ERROR'], models) +
    renderWindowEvents(st) +
    '\n' +
    textTable(['SINK', 'TYPE', 'CURSOR', 'BACKLOG', 'DELIVERED', 'DROPPED', 'DEAD LETTERS', 'LAST ERROR'], sinks) +
    `BACKLOG, DELIVERED and DROPPED count entries (log lines as the service returned them); processing may ship them as fewer records\n` +
    `\njournal: ${st.journal.entries} entries held until every sink has them (${st.journal.bytes} bytes); ${st.journal.lastSeq} entries journaled since the state file was made (last seq)\n`
  );
}

/** Window splits and abandoned windows (a running daemon's only), when there were any. */
function renderWindowEvents(st: DaemonStatus): string {
  const splits = st.models.filter((m) => (m.windowSplits ?? 0) > 0).map((m) => `${m.id} ${m.windowSplits}`);
  const abandoned = st.models.flatMap((m) => (m.abandonedWindows ?? []).map((w) => [m.id, `${iso(w.fromMs)} .. ${iso(w.toMs)}`, w.reason, String(w.pages), iso(w.atMs)]));
  let out = '';
  if (splits.length > 0) out += `\nwindows cut short (poll.window_limits, api.max_response_bytes): ${splits.join(', ')}\n`;
  if (abandoned.length > 0) out += `\nwindows abandoned at a window limit (entries on pages not read were skipped):\n${textTable(['MODEL', 'WINDOW', 'REASON', 'PAGES', 'AT'], abandoned)}`;
  return out;
}
