// The one answer to "is this path in that directory?" for every security decision in Ahma (the
// sandbox scope, path arguments, the private state, the install check, session roots, token
// files). Several spellings of the question used to disagree (one took a child named `..x` for a
// way out); now there is this one.
//
// The question is lexical: both paths are made absolute and normalised (`.`/`..` segments and
// trailing separators go), then compared segment by segment. Symlinks are NOT followed here: a
// caller deciding something about a real file passes real paths (realpath, resolveReal,
// realpathLenient). Names compare byte for byte, as the Linux kernel does: `/A` is not inside `/a`.
import { resolve, sep } from 'node:path';

/** True when `path` is `dir` itself or lies beneath it. */
export function isInside(path: string, dir: string): boolean {
  return contains(normalised(dir), normalised(path));
}

/** True when one of the two paths contains the other. */
export function overlaps(a: string, b: string): boolean {
  return isInside(a, b) || isInside(b, a);
}

/**
 * For many paths against the same few entries (the install check: hundreds of code paths against
 * the writable paths): the first entry whose path overlaps the one asked about, by `overlaps`,
 * with each entry's path normalised once instead of at every comparison.
 */
export function overlapsWith<T extends { readonly path: string }>(
  entries: readonly T[],
): (path: string) => T | undefined {
  const normal = entries.map((entry) => ({ entry, dir: normalised(entry.path) }));
  return (path) => {
    const other = normalised(path);
    return normal.find(({ dir }) => contains(dir, other) || contains(other, dir))?.entry;
  };
}

/**
 * Containment of two normalised paths. normalised() leaves no `.` or `..` segment and no doubled
 * or trailing separator (but for `/` itself), so a prefix that ends at a separator is containment.
 * (It replaced path.relative, which cost every start about 10 ms of the sandbox's set-up.)
 */
function contains(outer: string, inner: string): boolean {
  return inner === outer || inner.startsWith(outer === sep ? sep : `${outer}${sep}`);
}

/**
 * resolve(path), without calling it when `path` is already what it would return: absolute, with
 * no empty, `.` or `..` segment (so no doubled or trailing separator). Most callers pass real
 * paths, and resolve() was most of a sandbox set-up's time (the cover of HOME, the install check).
 */
function normalised(path: string): string {
  if (path.charCodeAt(0) !== SLASH) return resolve(path);
  if (path.length === 1) return path;
  // One pass over the segments after the leading separator.
  for (let start = 1, at = 1; at <= path.length; at += 1) {
    if (at < path.length && path.charCodeAt(at) !== SLASH) continue;
    const length = at - start;
    const dots =
      path.charCodeAt(start) === DOT && (length === 1 || path.charCodeAt(start + 1) === DOT);
    if (length === 0 || (length <= 2 && dots)) return resolve(path);
    start = at + 1;
  }
  return path;
}

const SLASH = 47;
const DOT = 46;
