//! Where the API token comes from: `api.token`, `api.token_file`, `$MLS_API_TOKEN`, then
//! the systemd credential `mls-api-token`, first found wins.
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { RawProblem } from './problems.js';

/** Name of the environment variable the token falls back to. */
export const TOKEN_ENV = 'MLS_API_TOKEN';
/** Name of the systemd credential the token falls back to (under `$CREDENTIALS_DIRECTORY`). */
export const TOKEN_CREDENTIAL = 'mls-api-token';

/** Most a token file is read: a token is far shorter, and a wrong path must not fill the memory. */
export const MAX_TOKEN_FILE_BYTES = 64 * 1024;

/**
 * The token held by `file`, or what is wrong with it. Only a regular file is read (opened
 * without blocking, so a FIFO with no writer cannot hang the start), of at most
 * {@link MAX_TOKEN_FILE_BYTES}.
 */
export function readTokenFile(file: string): { token?: string; problem?: string } {
  let content: string;
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { problem: `${file} is not a regular file (a FIFO, a device or a folder); write the token into a file` };
    if (stat.size > MAX_TOKEN_FILE_BYTES) return { problem: `${file} is larger than ${MAX_TOKEN_FILE_BYTES / 1024} KiB; it must hold only the token` };
    content = readFileSync(fd, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    return { problem: `cannot read ${file} (${code}); check the path and its permissions` };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const token = content.replace(/(\r?\n)+$/, '');
  if (token.trim() === '') return { problem: `${file} is empty; write the token into it` };
  if (/[\r\n]/.test(token)) return { problem: `${file} holds more than one line; it must hold only the token` };
  return { token };
}

/** Resolves the token: api.token, api.token_file, $MLS_API_TOKEN, then `$CREDENTIALS_DIRECTORY/mls-api-token`. */
export function resolveToken(api: { token?: string | undefined; token_file?: string | undefined }, env: NodeJS.ProcessEnv): { token?: string; problem?: RawProblem } {
  if (api.token !== undefined) return { token: api.token };
  if (api.token_file !== undefined) {
    const r = readTokenFile(api.token_file);
    return r.problem ? { problem: { path: ['api', 'token_file'], message: r.problem } } : { token: r.token! };
  }
  const fromEnv = env[TOKEN_ENV]?.replace(/(\r?\n)+$/, '');
  if (fromEnv !== undefined && fromEnv.trim() !== '') {
    if (/[\r\n]/.test(fromEnv)) return { problem: { path: ['api', 'token'], message: `${TOKEN_ENV} contains a line break; it must hold only the token` } };
    return { token: fromEnv };
  }
  const credDir = env.CREDENTIALS_DIRECTORY;
  if (credDir) {
    const file = path.join(credDir, TOKEN_CREDENTIAL);
    const r = readTokenFile(file);
    if (r.token !== undefined) return { token: r.token };
    if (!r.problem?.includes('ENOENT')) return { problem: { path: ['api', 'token'], message: `systemd credential: ${r.problem}` } };
  }
  return {
    problem: { path: ['api', 'token'], message: `no token: set api.token, api.token_file, ${TOKEN_ENV} or a systemd credential` },
  };
}
