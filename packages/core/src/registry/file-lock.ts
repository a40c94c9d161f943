// Mutual exclusion between processes sharing a registry file (two servers on one project): a lock
// file created exclusively beside it, holding the owner's pid. A lock whose owner is gone (it was
// killed mid-change) is taken over, so a crash never wedges the registry.
import { randomBytes } from 'node:crypto';
import { lstat, open, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AhmaError } from '../errors.js';
import type { PinnedDirectory } from './pinned-directory.js';
import { readRegularFile } from '../paths/read-regular.js';
import { isAlive } from './write-atomic.js';

const RETRY_MS = 5;
/** A lock file still empty after this long lost its writer between create and write. */
const EMPTY_GRACE_MS = 1000;

/** Runs `work` holding `<name>.lock` in `dir` (its real path is `where`, for messages). */
export async function withFileLock<T>(
  dir: PinnedDirectory,
  name: string,
  work: () => Promise<T>,
  timeoutMs = 10_000,
): Promise<T> {
  const lock = dir.entry(`${name}.lock`);
  const deadline = Date.now() + timeoutMs;
  let mine: LockIdentity | undefined;
  for (;;) {
    try {
      mine = await tryLock(lock);
      if (mine !== undefined) break;
      const holder = await lockHolder(lock);
      if (holder === 'released') continue;
      if (holder === 'stale') {
        // Only after a crash, or something a command put there. Two servers taking over one stale
        // lock at the same instant could both get it; a crash plus that race is rare enough to leave.
        await takeOver(lock);
        continue;
      }
      if (Date.now() > deadline) {
        throw new AhmaError(
          'REGISTRY_WRITE_FAILED',
          `the registry file ${join(dir.path, name)} stays locked by process ${String(holder)}; if that process is not an Ahma server, remove ${join(dir.path, name)}.lock`,
        );
      }
    } catch (error) {
      if (error instanceof AhmaError) throw error;
      throw new AhmaError(
        'REGISTRY_WRITE_FAILED',
        `the change was not made: cannot lock the registry file ${join(dir.path, name)}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    await sleep(RETRY_MS);
  }
  try {
    return await work();
  } finally {
    await release(lock, mine);
  }
}

/** Removes a stale lock; a directory at its name (rm would refuse it) is moved aside. */
async function takeOver(lock: string): Promise<void> {
  const info = await lstat(lock).catch(() => undefined);
  if (info === undefined) return;
  if (!info.isDirectory()) {
    await rm(lock, { force: true });
    return;
  }
  await rename(lock, `${lock}.stale-${randomBytes(4).toString('hex')}`).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  });
}

/** The lock file this process created: its content, this process's pid and a random token. */
type LockIdentity = string;

/** Removes the lock if it is still the one this process created; never fails the change. */
async function release(lock: string, mine: LockIdentity | undefined): Promise<void> {
  if (mine === undefined) return;
  const now = await readRegularFile(lock, 64).catch(() => undefined);
  if (now === mine) await rm(lock, { force: true }).catch(() => undefined);
}

/** Creates the lock holding this process's pid: its content, or undefined when it exists. */
async function tryLock(lock: string): Promise<LockIdentity | undefined> {
  let file;
  try {
    // wx: O_CREAT|O_EXCL, so a symlink planted at the name is never followed.
    file = await open(lock, 'wx', 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw error;
  }
  const content = `${String(process.pid)} ${randomBytes(8).toString('hex')}`;
  try {
    await file.writeFile(content);
  } finally {
    await file.close();
  }
  return content;
}

/** The pid holding the lock; 'stale' when its owner is gone (killed, or lost before writing). */
async function lockHolder(lock: string): Promise<number | 'released' | 'stale'> {
  let text: string;
  try {
    text = await readRegularFile(lock, 64);
  } catch (error) {
    // Gone meanwhile, or not a lock this code wrote (taken over like a dead owner's).
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'released' : 'stale';
  }
  const pid = Number(text.split(' ')[0]);
  if (text !== '' && Number.isInteger(pid) && pid > 0) return isAlive(pid) ? pid : 'stale';
  const info = await stat(lock).catch(() => undefined);
  if (info === undefined) return 'released';
  return Date.now() - info.mtimeMs < EMPTY_GRACE_MS ? 0 : 'stale';
}
