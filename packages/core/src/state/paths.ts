// Where a path really is. Ahma's private state and its own code must lie outside every path
// commands may write (R7.6), so containment (paths/inside.ts) is asked of resolved paths: a
// spelling with a symlink in it must not slip past a check.
import { realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

/** A path with what it is, for messages ("the sandbox scope", "the temp directory", …). */
export interface LabelledPath {
  readonly path: string;
  readonly label: string;
}

/**
 * The real path of `path`, which need not exist yet: the real path of its deepest existing
 * ancestor, followed by the components still to be created.
 */
export async function resolveReal(path: string): Promise<string> {
  const missing: string[] = [];
  let current = resolve(path);
  for (;;) {
    try {
      return join(await realpath(current), ...missing.reverse());
    } catch (error) {
      const parent = dirname(current);
      if (errorCode(error) !== 'ENOENT' || parent === current) throw error;
      missing.push(basename(current));
      current = parent;
    }
  }
}

/** The `code` of a Node system error (ENOENT, EEXIST, …), if it has one. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
