// A file replaced so that a crash at any instant leaves either its old content or its new one,
// never a mix (FR5/NFR2): the new content goes to a temporary file beside it, is flushed to disk,
// renamed over the file, and the directory is flushed so the rename itself survives a power loss.
// All of it happens in a pinned directory (pinned-directory.ts).
import { randomBytes } from 'node:crypto';
import { lstat, open, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { withPinnedDirectory, type PinnedDirectory } from './pinned-directory.js';

const TEMP_MARK = '.tmp-';

export async function writeFileAtomic(
  dir: PinnedDirectory,
  name: string,
  text: string,
): Promise<void> {
  const temp = dir.entry(
    `${name}${TEMP_MARK}${String(process.pid)}-${randomBytes(4).toString('hex')}`,
  );
  try {
    // wx: O_CREAT|O_EXCL, so a symlink planted at the name is never followed.
    const file = await open(temp, 'wx', 0o644);
    try {
      await file.writeFile(text);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, dir.entry(name));
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await dir.sync();
}

/** writeFileAtomic for a path: its directory pinned for the write (created when missing). */
export function writeFileAtomicAt(path: string, text: string): Promise<void> {
  return withPinnedDirectory(dirname(path), (pinned) =>
    writeFileAtomic(pinned, basename(path), text),
  );
}

/**
 * Removes the temporary files of writes that died before their rename (their process is gone).
 * Only regular files: anything else of that name is a command's doing, and left where it is.
 */
export async function removeStaleTemporaries(dir: PinnedDirectory, name: string): Promise<void> {
  const prefix = name + TEMP_MARK;
  const names = await readdir(dir.entry('.')).catch(() => [] as string[]);
  for (const entry of names) {
    if (!entry.startsWith(prefix)) continue;
    const pid = Number(entry.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) continue;
    const info = await lstat(dir.entry(entry)).catch(() => undefined);
    if (info?.isFile() === true) await rm(dir.entry(entry), { force: true }).catch(() => undefined);
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
