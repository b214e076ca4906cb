//! `mls state check --config F`: verifies the state file (SQLite integrity, schema) and
//! says what to do when it is damaged.
import type { Command } from 'commander';
import { configOption } from './common.js';
import { StateError, describeError } from '../errors.js';

/** Adds `mls state`. */
export function register(program: Command): void {
  const state = program.command('state').description('inspect the state file');
  state
    .command('check')
    .description('check the integrity of the state file')
    .addOption(configOption())
    .action(async (opts: { config: string }) => {
      const [{ loadConfig }, { readStateFile }] = await Promise.all([import('./config.js'), import('../journal/reader.js')]);
      const config = await loadConfig(opts.config);
      const path = config.state.path;
      // Refused at open as every command refuses it: damaged, empty, or of a newer schema.
      const said = readStateFile(path, (store) => {
        let problems: string[];
        try {
          problems = store.integrityCheck();
        } catch (err) {
          problems = [describeError(err)];
        }
        if (problems.length > 0) {
          throw new StateError(
            'MLS_ERR_STATE_CORRUPT',
            `state file ${path} is damaged:\n  ${problems.slice(0, 20).join('\n  ')}\n` +
              `recover: stop the daemon, move ${path} (and ${path}-wal, ${path}-shm) aside or restore a backup; ` +
              `a new state file makes the daemon re-read every model from start_at (file sinks then receive those entries again)`,
          );
        }
        return `state file ${path} is healthy: ${store.listCheckpoints().length} model checkpoints, ${store.listSinks().length} sink cursors, ${store.journalSize().entries} journal entries\n`;
      });
      process.stdout.write(said ?? `state file ${path} does not exist yet; the daemon creates it at its first start\n`);
    });
}
