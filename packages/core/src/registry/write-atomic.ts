// A file replaced so that a crash at any instant leaves either its old content or its new one,
// never a mix (FR5/NFR2): the new content goes to a temporary file beside it, is flushed to disk,
// renamed over the file, and the directory is flushed so the rename itself survives a power loss.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

const TEMP_MARK = '.tmp-';

export async function writeFileAtomic(path: string, text: string): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const temp = `${path}${TEMP_MARK}${String(process.pid)}-${randomBytes(4).toString('hex')}`;
  try {
    const file = await open(temp, 'wx', 0o644);
    try {
      await file.writeFile(text);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  const directory = await open(dir, 'r');
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}

/** Removes the temporary files of writes that died before their rename (their process is gone). */
export async function removeStaleTemporaries(path: string): Promise<void> {
  const prefix = basename(path) + TEMP_MARK;
  const names = await readdir(dirname(path)).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) continue;
    await rm(join(dirname(path), name), { force: true });
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
