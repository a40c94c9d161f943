// The server writes its registry file and exports where sandboxed commands can write too (the
// scope). A command could swap a directory on that path for a symlink to outside between the
// server's check and its write, making the server write outside for it (a confused deputy). So
// every write goes through a directory pinned by descriptor: its real path is checked once pinned,
// and names are opened through /proc/self/fd/N, which stays that very directory whatever happens
// to its path. Files are created with O_EXCL (a planted symlink is never followed) and renamed
// over (a symlink there is replaced, not followed).
import { constants, existsSync } from 'node:fs';
import { mkdir, open, realpath, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Linux: names under a pinned descriptor. Elsewhere the path is re-checked (best effort). */
const PROC_FD = existsSync('/proc/self/fd') ? '/proc/self/fd' : undefined;

export class DirectoryMovedError extends Error {
  constructor(
    readonly dir: string,
    readonly now: string,
  ) {
    super(
      `${dir} now resolves to ${now} (a symbolic link was put in its path); nothing was written`,
    );
  }
}

export class PinnedDirectory {
  readonly #handle: FileHandle;
  readonly #dir: string;

  private constructor(handle: FileHandle, dir: string) {
    this.#handle = handle;
    this.#dir = dir;
  }

  /**
   * Pins `dir`, a real path (no symlinks in it when it was resolved), creating missing levels
   * one at a time through their pinned parents unless `create` is false (ENOENT then). Throws
   * DirectoryMovedError when `dir` no longer resolves to itself.
   */
  static async open(dir: string, create = true): Promise<PinnedDirectory> {
    let handle: FileHandle;
    try {
      handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    } catch (error) {
      const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
      if (!missing || !create || dirname(dir) === dir) throw error;
      const parent = await PinnedDirectory.open(dirname(dir));
      try {
        await mkdir(parent.entry(basename(dir))).catch((failure: unknown) => {
          if ((failure as NodeJS.ErrnoException).code !== 'EEXIST') throw failure;
        });
      } finally {
        await parent.close();
      }
      handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    }
    const now = await realpath(PROC_FD === undefined ? dir : `${PROC_FD}/${String(handle.fd)}`);
    if (now !== dir) {
      await handle.close();
      throw new DirectoryMovedError(dir, now);
    }
    return new PinnedDirectory(handle, dir);
  }

  /** The directory's real path when pinned (for messages). */
  get path(): string {
    return this.#dir;
  }

  /** The path of `name` in this very directory. */
  entry(name: string): string {
    return PROC_FD === undefined
      ? join(this.#dir, name)
      : `${PROC_FD}/${String(this.#handle.fd)}/${name}`;
  }

  /** Flushes the directory itself, so a rename in it survives a power loss. */
  sync(): Promise<void> {
    return this.#handle.sync();
  }

  close(): Promise<void> {
    return this.#handle.close();
  }
}

/** Runs `work` with `dir` pinned (created when missing), then unpins it. */
export async function withPinnedDirectory<T>(
  dir: string,
  work: (pinned: PinnedDirectory) => Promise<T>,
): Promise<T> {
  const pinned = await PinnedDirectory.open(dir);
  try {
    return await work(pinned);
  } finally {
    await pinned.close();
  }
}
