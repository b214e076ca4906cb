//! Node's compile cache for `mls`: the bytecode of the modules a command loads is kept on
//! disk and reused by the next command, so `mls status` and a restarting daemon skip most of
//! their compiling. The cache holds code that the next run executes, so it is used only in a
//! folder that no other user can write: created with mode 0700, refused when it (or the
//! folder it is in) belongs to someone else or is writable by others. A path through symbolic
//! links (systemd's `CacheDirectory=` with `DynamicUser=` is one) is resolved once, the folder
//! it leads to is the one checked, and Node is given that folder: a link changed later cannot
//! redirect the cache. Where that does not hold, or the folder cannot be made (a read-only file
//! system), `mls` runs without it, as before.
import { lstatSync, mkdirSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';

/** The environment variable that names the folder, or turns the cache off (`off`). */
export const COMPILE_CACHE_ENV = 'MLS_COMPILE_CACHE';

/** Where the compile cache would go, or why it is not used. */
export type CompileCacheChoice = { dir: string } | { off: string };

/**
 * The folder for the compile cache: `MLS_COMPILE_CACHE` when set (an absolute path, or `off`),
 * else `$XDG_CACHE_HOME/model-log-shipper`, else `$HOME/.cache/model-log-shipper`.
 */
export function compileCacheDir(env: NodeJS.ProcessEnv): CompileCacheChoice {
  const given = env[COMPILE_CACHE_ENV];
  if (given !== undefined && given !== '') {
    if (given === 'off') return { off: `${COMPILE_CACHE_ENV}=off` };
    if (!isAbsolute(given)) return { off: `${COMPILE_CACHE_ENV} must be an absolute path or off, got ${JSON.stringify(given)}` };
    return { dir: given };
  }
  if (env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME)) return { dir: join(env.XDG_CACHE_HOME, 'model-log-shipper') };
  if (env.HOME && isAbsolute(env.HOME)) return { dir: join(env.HOME, '.cache', 'model-log-shipper') };
  return { off: 'no HOME or XDG_CACHE_HOME' };
}

/**
 * The folder that may hold the cache, or why `dir` may not: after creating it (mode 0700)
 * when missing and resolving any symbolic links on its way, the real folder and its parent
 * must be owned by this user (or root, for the parent), neither writable by group or others
 * unless the parent is sticky (as /tmp is). Returns the real folder: the one to give Node.
 */
export function checkCacheDir(dir: string, uid: number): CompileCacheChoice {
  let real: string;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    real = realpathSync(dir);
  } catch (err) {
    return { off: `cannot create ${dir}: ${(err as Error).message}` };
  }
  const own = lstatSync(real);
  if (!own.isDirectory()) return { off: `${real} is not a folder` };
  if (own.uid !== uid) return { off: `${real} belongs to another user` };
  if ((own.mode & 0o022) !== 0) return { off: `${real} is writable by other users` };
  const parent = lstatSync(dirname(real));
  if (parent.uid !== uid && parent.uid !== 0) return { off: `${dirname(real)} belongs to another user` };
  if ((parent.mode & 0o022) !== 0 && (parent.mode & 0o1000) === 0) return { off: `${dirname(real)} is writable by other users` };
  return { dir: real };
}

/**
 * Turns on Node's compile cache in the folder {@link compileCacheDir} chooses, when
 * {@link checkCacheDir} finds nothing against it. Returns the folder, or why not. Never throws:
 * a command runs the same without the cache.
 */
export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): CompileCacheChoice {
  try {
    const node = process.getBuiltinModule('node:module');
    // NODE_COMPILE_CACHE given to Node itself: its folder, its choice.
    const already = node.getCompileCacheDir?.();
    if (already) return { dir: already };
    const choice = compileCacheDir(env);
    if ('off' in choice) return choice;
    const uid = process.getuid?.();
    if (uid === undefined) return { off: 'no user id on this platform' };
    const checked = checkCacheDir(choice.dir, uid);
    if ('off' in checked) return checked;
    const result = node.enableCompileCache(checked.dir);
    const { ENABLED, ALREADY_ENABLED } = node.constants.compileCacheStatus;
    if (result.status === ENABLED || result.status === ALREADY_ENABLED) return { dir: result.directory ?? checked.dir };
    return { off: result.message ?? 'Node did not enable it' };
  } catch (err) {
    return { off: (err as Error).message };
  }
}

/** Writes what was compiled so far to the cache (a daemon runs for long; what it compiled at start is kept for the next). */
export function flushCompileCache(): void {
  try {
    process.getBuiltinModule('node:module').flushCompileCache?.();
  } catch {
    // Only a cache: the next start compiles again.
  }
}
