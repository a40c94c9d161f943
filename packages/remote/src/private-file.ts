// Whether a file of secrets (a token file) can be trusted as this user's alone: a regular file,
// owned by this user, that nobody else may read or write. Anything else means someone else had, or
// may have, a hand in it. Shared by the OAuth token store, the HTTP server's own token and the
// introspection cache (whose records become tool definitions).
import { constants, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

export interface PrivateFileProblem {
  readonly kind: 'not-regular' | 'owner' | 'mode';
  /** Completes "<path> …", e.g. `belongs to another user (uid 1000)`. */
  readonly text: string;
}

/** Why the file `stat` describes is not private, or undefined when it is. */
export function privateFileProblem(
  stat: Pick<Stats, 'uid' | 'mode' | 'isFile'>,
): PrivateFileProblem | undefined {
  if (!stat.isFile()) return { kind: 'not-regular', text: 'is not a regular file' };
  if (process.getuid !== undefined && stat.uid !== process.getuid()) {
    return { kind: 'owner', text: `belongs to another user (uid ${String(stat.uid)})` };
  }
  if ((stat.mode & 0o077) !== 0) {
    return {
      kind: 'mode',
      text: `can be read or written by others (mode ${(stat.mode & 0o777).toString(8)})`,
    };
  }
  return undefined;
}

/** What reading a private file found; `why` completes "<path> …". */
export type PrivateRead =
  | { readonly kind: 'missing' }
  | {
      readonly kind: 'refused';
      readonly reason: 'link' | 'unreadable' | 'not-private' | 'too-large';
      readonly why: string;
    }
  | { readonly kind: 'text'; readonly text: string };

/**
 * The text of the file at `path` when it is private (privateFileProblem) and at most `maxBytes`:
 * never read through a link (O_NOFOLLOW), never waiting on a FIFO planted at the name
 * (O_NONBLOCK), never a terminal taken as the process's own (O_NOCTTY); the checks are made on the
 * file opened, not on its name.
 */
export async function readPrivateFile(path: string, maxBytes: number): Promise<PrivateRead> {
  let handle: FileHandle;
  try {
    handle = await open(
      path,
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY,
    );
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    return code === 'ELOOP'
      ? { kind: 'refused', reason: 'link', why: 'is a symbolic link' }
      : { kind: 'refused', reason: 'unreadable', why: `cannot be read (${String(code)})` };
  }
  try {
    const info = await handle.stat();
    const problem = privateFileProblem(info);
    if (problem !== undefined) return { kind: 'refused', reason: 'not-private', why: problem.text };
    if (info.size > maxBytes) return { kind: 'refused', reason: 'too-large', why: 'is too large' };
    return { kind: 'text', text: await handle.readFile('utf8') };
  } finally {
    await handle.close();
  }
}
