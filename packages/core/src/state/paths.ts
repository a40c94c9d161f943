// Where a path really is, and whether two paths overlap. Ahma's private state and its own code must
// lie outside every path commands may write (R7.6), so these questions are answered on resolved
// paths: a spelling with a symlink in it must not slip past a check.
import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';

/** A path with what it is, for messages ("the sandbox scope", "the temp directory", …). */
export interface LabelledPath {
  readonly path: string;
  readonly label: string;
}

/** True when `path` is `root` or lies beneath it (both absolute and normalised). */
export function isWithin(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith('../') && !isAbsolute(rel));
}

/** True when one of the two paths contains the other. */
export function overlaps(a: string, b: string): boolean {
  return isWithin(a, b) || isWithin(b, a);
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
