//! Node's compile cache for `mls`: the bytecode of the modules a command loads is kept on
//! disk and reused by the next command, so `mls status` and a restarting daemon skip most of
//! their compiling. The cache holds code that the next run executes, so it is used only in a
//! folder that no other user can write or replace. Node's own default (a folder in the
//! system's temp dir, shared by every user, with no such check) is not used for that reason.
//! Where the folder does not pass, or cannot be made (a read-only file system), `mls` runs
//! without the cache.
import { lstatSync, mkdirSync, realpathSync, type Stats } from 'node:fs';
import module from 'node:module';
import { dirname, isAbsolute, join } from 'node:path';

/**
 * The folder for the compile cache: `MLS_COMPILE_CACHE` when set (an absolute path; `off`, or
 * anything else, turns the cache off), else `$XDG_CACHE_HOME/model-log-shipper`, else
 * `$HOME/.cache/model-log-shipper`; undefined when none applies.
 */
export function compileCacheDir(env: NodeJS.ProcessEnv): string | undefined {
  const given = env.MLS_COMPILE_CACHE;
  if (given) return isAbsolute(given) ? given : undefined;
  const home = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : env.HOME && isAbsolute(env.HOME) ? join(env.HOME, '.cache') : undefined;
  return home && join(home, 'model-log-shipper');
}

/**
 * `dir`, created with mode 0700 when missing, as the real folder it leads to (symbolic links
 * resolved once, so a link changed later cannot redirect the cache), or undefined when that
 * folder is not this user's, or it or its parent can be written by others (a sticky parent,
 * as /tmp is, excepted). Throws when the folder cannot be made.
 */
export function privateCacheDir(dir: string, uid: number): string | undefined {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const real = realpathSync(dir);
  const [own, parent] = [lstatSync(real), lstatSync(dirname(real))];
  const othersWrite = (s: Stats) => (s.mode & 0o022) !== 0;
  const safe = own.isDirectory() && own.uid === uid && !othersWrite(own) && (parent.uid === uid || parent.uid === 0) && (!othersWrite(parent) || (parent.mode & 0o1000) !== 0);
  return safe ? real : undefined;
}

/** Turns on Node's compile cache in {@link compileCacheDir}'s folder when it is private; never throws (a command runs the same without it). */
export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): void {
  try {
    const dir = compileCacheDir(env);
    const uid = process.getuid?.();
    // NODE_COMPILE_CACHE given to Node itself: its folder, its choice.
    if (module.getCompileCacheDir() !== undefined || dir === undefined || uid === undefined) return;
    const real = privateCacheDir(dir, uid);
    if (real !== undefined) module.enableCompileCache(real);
  } catch {
    // Only a cache: the command runs without it.
  }
}
