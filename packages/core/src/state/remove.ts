// Deleting state directories without ever following a link (R7.6). Two kinds:
// - a directory only the server writes (its logs): walked here with lstat, every entry unlinked
//   as what it is, so a link is removed, never followed;
// - a cache directory, which commands write: the server does not walk it at all. Node has no
//   unlinkat(), so a path walk can be redirected by a process renaming a directory to a link
//   mid-walk; instead `rm` runs confined to exactly that directory, where even a redirected walk
//   can delete nothing else. The server then removes the emptied directory itself.
import { spawn } from 'node:child_process';
import { lstat, readdir, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { errorCode } from './paths.js';

/** Deletes a tree only the server writes; a missing tree is fine. Links are removed, not followed. */
export async function removeTree(path: string): Promise<void> {
  let isDirectory: boolean;
  try {
    isDirectory = (await lstat(path)).isDirectory();
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return;
    throw error;
  }
  if (!isDirectory) {
    await unlink(path).catch(ignoreMissing);
    return;
  }
  const entries = await readdir(path, { withFileTypes: true }).catch((error: unknown) => {
    ignoreMissing(error);
    return [];
  });
  for (const entry of entries) {
    const child = join(path, entry.name);
    // withFileTypes reports a link as a link (d_type, or lstat): it is unlinked, never entered.
    if (entry.isDirectory()) await removeTree(child);
    else await unlink(child).catch(ignoreMissing);
  }
  await rmdir(path).catch(ignoreMissing);
}

/** A program and arguments (the sandbox's CommandLine). */
export interface ConfinedLine {
  readonly file: string;
  readonly args: readonly string[];
}

/**
 * The script a confined remover runs on "$1": read-only directories (Go's module cache) are made
 * writable first, without following links (chmod -R skips the links it meets), then emptied.
 */
export const EMPTY_DIRECTORY_SCRIPT =
  'chmod -R u+rwX -- "$1" 2>/dev/null; rm -rf -- "$1" 2>/dev/null; exit 0';

/**
 * Empties `dir` with `line` (a shell running EMPTY_DIRECTORY_SCRIPT confined to `dir`), then removes
 * the directory itself. Resolves false when something was left.
 */
export async function removeConfined(
  dir: string,
  line: ConfinedLine,
  env: Readonly<Record<string, string>>,
): Promise<boolean> {
  try {
    if (!(await lstat(dir)).isDirectory()) return false;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return true;
    throw error;
  }
  // An empty directory (no command wrote a cache) needs no remover: rmdir follows nothing.
  try {
    await rmdir(dir);
    return true;
  } catch {
    // Not empty: the confined remover empties it.
  }
  await new Promise<void>((resolve) => {
    const child = spawn(line.file, [...line.args], { env, stdio: 'ignore', cwd: '/' });
    child.once('error', () => resolve());
    child.once('close', () => resolve());
  });
  try {
    await rmdir(dir);
    return true;
  } catch (error) {
    return errorCode(error) === 'ENOENT';
  }
}

function ignoreMissing(error: unknown): void {
  if (errorCode(error) !== 'ENOENT') throw error;
}
