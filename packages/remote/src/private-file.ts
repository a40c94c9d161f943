// Whether a file of secrets (a token file) can be trusted as this user's alone: a regular file,
// owned by this user, that nobody else may read or write. Anything else means someone else had, or
// may have, a hand in it. Shared by the OAuth token store and the HTTP server's own token.
import type { Stats } from 'node:fs';

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
