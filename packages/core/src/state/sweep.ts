// The sweep at start (SPEC §4 "Resources"): a server killed with SIGKILL never removes its state
// and cache directories, so the next server to start on the same root removes those whose owner
// has certainly ended (owner.ts). A live server's directories, and names Ahma did not make, are
// never touched; links are never followed (remove.ts).
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ownerIsGone, ownTag, parseOwnerName, type OwnerTag } from './owner.js';
import { removeTree } from './remove.js';

export interface SweepReport {
  /** Directories removed. */
  readonly removed: readonly string[];
  /** Directories that could not be removed, and why. */
  readonly failed: readonly { readonly path: string; readonly error: string }[];
}

export interface SweepOptions {
  readonly root: string;
  readonly self: OwnerTag;
  /** Removes a dead server's cache directory (written by commands, so emptied confined). */
  readonly removeCache: (dir: string) => Promise<boolean>;
}

/** Removes what servers that are gone left under the root. Never rejects. */
export async function sweepDeadServers(options: SweepOptions): Promise<SweepReport> {
  const removed: string[] = [];
  const failed: { path: string; error: string }[] = [];
  const sweep = async (folder: Folder) => {
    for (const { path, owner } of await ownedDirectories(options.root, folder)) {
      if (!ownerIsGone(owner, options.self)) continue;
      try {
        if (folder === 'servers') await removeTree(path);
        else if (!(await options.removeCache(path))) throw new Error('something was left');
        removed.push(path);
      } catch (error) {
        failed.push({ path, error: error instanceof Error ? error.message : String(error) });
      }
    }
  };
  await Promise.all([sweep('servers'), sweep('caches')]);
  return { removed, failed };
}

/**
 * The private directories of the servers under the root that still run (what they keep there for
 * the person, the operations page's link, is read by `ahma-shell doctor`).
 */
export async function liveServerDirectories(
  root: string,
  self: OwnerTag = ownTag(),
): Promise<string[]> {
  const owned = await ownedDirectories(root, 'servers');
  return owned.filter(({ owner }) => !ownerIsGone(owner, self)).map(({ path }) => path);
}

type Folder = 'servers' | 'caches';

/** The directories of `<root>/<folder>` a server made, each with its owner. */
async function ownedDirectories(
  root: string,
  folder: Folder,
): Promise<{ path: string; owner: OwnerTag }[]> {
  const dir = join(root, folder);
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.flatMap((entry) => {
    // A link or a file is nothing Ahma made: left alone, never followed.
    if (!entry.isDirectory()) return [];
    const owner = parseOwnerName(entry.name);
    return owner === undefined ? [] : [{ path: join(dir, entry.name), owner }];
  });
}
