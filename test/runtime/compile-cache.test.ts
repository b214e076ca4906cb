import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { compileCacheDir, privateCacheDir } from '../../src/runtime/compile-cache.js';
import { runMls } from '../e2e/harness.js';

const dirs: string[] = [];
function scratch(): string {
  // Real: the check names folders by their real path.
  const d = realpathSync(mkdtempSync(join(tmpdir(), 'mls-cc-')));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const uid = process.getuid!();

describe('compileCacheDir', () => {
  it('takes MLS_COMPILE_CACHE, then XDG_CACHE_HOME, then HOME', () => {
    expect(compileCacheDir({ MLS_COMPILE_CACHE: '/var/cache/mls', XDG_CACHE_HOME: '/x', HOME: '/h' })).toBe('/var/cache/mls');
    expect(compileCacheDir({ XDG_CACHE_HOME: '/x', HOME: '/h' })).toBe('/x/model-log-shipper');
    expect(compileCacheDir({ XDG_CACHE_HOME: 'relative', HOME: '/h' })).toBe('/h/.cache/model-log-shipper');
  });

  it('is off when asked, when the path is relative, or when there is no home', () => {
    expect(compileCacheDir({ MLS_COMPILE_CACHE: 'off', HOME: '/h' })).toBeUndefined();
    expect(compileCacheDir({ MLS_COMPILE_CACHE: 'cache', HOME: '/h' })).toBeUndefined();
    expect(compileCacheDir({ XDG_CACHE_HOME: 'relative' })).toBeUndefined();
    expect(compileCacheDir({})).toBeUndefined();
  });
});

describe('privateCacheDir', () => {
  it('creates a missing folder (and missing parents) that only this user can use', () => {
    const root = scratch();
    const dir = join(root, 'a', 'b');
    expect(privateCacheDir(dir, uid)).toBe(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(root, 'a')).mode & 0o777).toBe(0o700);
  });

  it('refuses a folder others can write, or one inside a folder others can write', () => {
    const root = scratch();
    const open = join(root, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    expect(privateCacheDir(open, uid)).toBeUndefined();
    const inside = join(open, 'cache');
    expect(privateCacheDir(inside, uid)).toBeUndefined();
    // the same folder, once only its owner can write it, is taken
    chmodSync(open, 0o755);
    expect(privateCacheDir(inside, uid)).toBe(inside);
    expect(privateCacheDir(open, uid)).toBe(open);
    chmodSync(open, 0o775);
    expect(privateCacheDir(open, uid)).toBeUndefined();
  });

  it('takes a folder inside a sticky shared folder (as /tmp is)', () => {
    const root = scratch();
    const shared = join(root, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    expect(privateCacheDir(join(shared, 'cache'), uid)).toBe(join(shared, 'cache'));
  });

  it('follows symbolic links once and checks, and answers, the folder they lead to', () => {
    const root = scratch();
    // systemd's CacheDirectory= with DynamicUser=: /var/cache/mls is a link to private/mls.
    const real = join(root, 'private', 'mls');
    mkdirSync(real, { recursive: true, mode: 0o755 });
    const link = join(root, 'mls');
    symlinkSync(join('private', 'mls'), link);
    expect(privateCacheDir(link, uid)).toBe(real);
    expect(privateCacheDir(join(link, 'compile'), uid)).toBe(join(real, 'compile'));
    // A link to a folder others can write is refused by what it leads to.
    const open = join(root, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    const toOpen = join(root, 'to-open');
    symlinkSync(open, toOpen);
    expect(privateCacheDir(toOpen, uid)).toBeUndefined();
    // A link to a file is no folder.
    const file = join(root, 'file');
    writeFileSync(file, '');
    const toFile = join(root, 'to-file');
    symlinkSync(file, toFile);
    expect(() => privateCacheDir(toFile, uid)).toThrow(/EEXIST/);
  });

  it('throws for a folder it cannot create', () => {
    const root = scratch();
    // A file where a parent folder should be.
    const blocked = join(root, 'file');
    writeFileSync(blocked, '');
    expect(() => privateCacheDir(join(blocked, 'cache'), uid)).toThrow();
  });

  it.skipIf(uid !== 0)('refuses a folder of another user, or one in another user\'s folder (needs root to make them)', () => {
    const root = scratch();
    const theirs = join(root, 'theirs');
    mkdirSync(theirs, { mode: 0o700 });
    chownSync(theirs, 12345, 12345);
    expect(privateCacheDir(theirs, uid)).toBeUndefined();
    expect(privateCacheDir(join(theirs, 'mine'), uid)).toBeUndefined();
  });
});

describe('mls with the compile cache', () => {
  it('keeps compiled modules in a private folder under XDG_CACHE_HOME', async () => {
    const root = scratch();
    const r = await runMls(['--version'], { XDG_CACHE_HOME: root });
    expect(r.code).toBe(0);
    const dir = join(root, 'model-log-shipper');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const versions = readdirSync(dir);
    expect(versions).toHaveLength(1);
    expect(readdirSync(join(dir, versions[0]!)).length).toBeGreaterThan(10);
  });

  it('runs as before on a damaged cache (files cut short or overwritten)', async () => {
    const root = scratch();
    expect((await runMls(['--version'], { XDG_CACHE_HOME: root })).code).toBe(0);
    const dir = join(root, 'model-log-shipper');
    const folder = join(dir, readdirSync(dir)[0]!);
    const files = readdirSync(folder);
    files.forEach((f, i) => writeFileSync(join(folder, f), i % 2 === 0 ? readFileSync(join(folder, f)).subarray(0, 64) : randomBytes(4096)));
    const r = await runMls(['--version'], { XDG_CACHE_HOME: root });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('writes nothing when it is off, or into a folder others can write', async () => {
    const root = scratch();
    expect((await runMls(['--version'], { XDG_CACHE_HOME: root, MLS_COMPILE_CACHE: 'off' })).code).toBe(0);
    expect(existsSync(join(root, 'model-log-shipper'))).toBe(false);
    const open = join(root, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    expect((await runMls(['--version'], { MLS_COMPILE_CACHE: open })).code).toBe(0);
    expect(readdirSync(open)).toEqual([]);
  });
});
