// Mutual exclusion between processes sharing a registry file (two servers on one project): a lock
// file created exclusively beside it, holding the owner's pid. A lock whose owner is gone (it was
// killed mid-change) is taken over, so a crash never wedges the registry.
import { mkdir, open, readFile, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AhmaError } from '../errors.js';
import { isAlive } from './write-atomic.js';

const RETRY_MS = 5;
/** A lock file still empty after this long lost its writer between create and write. */
const EMPTY_GRACE_MS = 1000;

export async function withFileLock<T>(
  path: string,
  work: () => Promise<T>,
  timeoutMs = 10_000,
): Promise<T> {
  const lock = `${path}.lock`;
  const deadline = Date.now() + timeoutMs;
  await mkdir(dirname(path), { recursive: true }).catch(cannotLock(path));
  for (;;) {
    try {
      const file = await open(lock, 'wx', 0o644);
      try {
        await file.writeFile(String(process.pid));
      } finally {
        await file.close();
      }
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') cannotLock(path)(error);
    }
    const holder = await lockHolder(lock);
    if (holder === 'released') continue;
    if (holder === 'stale') {
      // Only after a crash. Two servers taking over one stale lock at the same instant could both
      // get it; a crash plus that race is rare enough to leave.
      await rm(lock, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new AhmaError(
        'REGISTRY_WRITE_FAILED',
        `the registry file ${path} stays locked by process ${String(holder)}; if that process is not an Ahma server, remove ${lock}`,
      );
    }
    await sleep(RETRY_MS);
  }
  try {
    return await work();
  } finally {
    await rm(lock, { force: true });
  }
}

/** The pid holding the lock; 'stale' when its owner is gone (killed, or lost before writing). */
async function lockHolder(lock: string): Promise<number | 'released' | 'stale'> {
  const text = await readFile(lock, 'utf8').catch(() => undefined);
  if (text === undefined) return 'released';
  const pid = Number(text);
  if (text !== '' && Number.isInteger(pid) && pid > 0) return isAlive(pid) ? pid : 'stale';
  const info = await stat(lock).catch(() => undefined);
  if (info === undefined) return 'released';
  return Date.now() - info.mtimeMs < EMPTY_GRACE_MS ? 0 : 'stale';
}

function cannotLock(path: string): (error: unknown) => never {
  return (error) => {
    throw new AhmaError(
      'REGISTRY_WRITE_FAILED',
      `the change was not made: cannot lock the registry file ${path}: ${(error as Error).message}`,
      { cause: error },
    );
  };
}
