// Path arguments and working directories: resolved against the working directory, symlinks
// followed, and refused outside the sandbox scope. The kernel sandbox stays the real boundary;
// this gives the agent a clear error instead of a confusing EACCES.
import { lstat, readlink, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { AhmaError } from '../errors.js';
import { isInside } from '../paths/inside.js';

const MAX_SYMLINK_HOPS = 40;

/**
 * Real paths of scopes already seen. A scope is fixed for the server's life (R7.1: the sandbox
 * was built on its real path at start), so it is resolved once, not on every call.
 */
const realScopes = new Map<string, string>();

async function realScopeOf(scope: string): Promise<string> {
  const known = realScopes.get(scope);
  if (known !== undefined) return known;
  const real = await realpath(scope);
  realScopes.set(scope, real);
  return real;
}

/**
 * Resolves a path argument against `base` and returns its absolute form. The path need not exist;
 * the deepest existing ancestor and any symlinks (dangling ones too) are followed to decide
 * whether it lies inside `scope`.
 */
export async function resolvePathInScope(
  value: string,
  base: string,
  scope: string,
  field: string,
): Promise<string> {
  if (value === '') throw new AhmaError('PATH_INVALID', `argument "${field}": the path is empty`);
  if (value.includes('\0')) {
    throw new AhmaError('PATH_INVALID', `argument "${field}": the path contains a NUL byte`);
  }
  const absolute = resolve(base, value);
  const realScope = await realScopeOf(scope);
  const real = await realpathLenient(absolute);
  if (!isInside(real, realScope)) {
    const via = real === absolute ? '' : ` (it resolves to ${real})`;
    throw new AhmaError(
      'PATH_OUTSIDE_SCOPE',
      `argument "${field}": ${value} is outside the sandbox scope ${realScope}${via}`,
      { cause: { path: absolute, real } },
    );
  }
  return absolute;
}

/**
 * The working directory for a call: the scope by default, else the given directory (relative to the
 * scope), which must exist and lie inside the scope. Returns its real path.
 */
export async function resolveWorkingDirectory(
  value: string | undefined,
  scope: string,
): Promise<string> {
  const realScope = await realScopeOf(scope);
  if (value === undefined || value === '') return realScope;
  const absolute = isAbsolute(value) ? resolve(value) : resolve(realScope, value);
  const real = await realpathLenient(absolute);
  if (!isInside(real, realScope)) {
    throw new AhmaError(
      'PATH_OUTSIDE_SCOPE',
      `working_directory ${value} is outside the sandbox scope ${realScope}`,
    );
  }
  const info = await stat(real).catch(() => undefined);
  if (info === undefined || !info.isDirectory()) {
    throw new AhmaError(
      'WORKING_DIRECTORY_INVALID',
      `working_directory ${value} ${info === undefined ? 'does not exist' : 'is not a directory'}`,
    );
  }
  return real;
}

/** realpath() that also works for paths that do not exist yet, and for dangling symlinks. */
export async function realpathLenient(path: string, hops = 0): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    if (hops > MAX_SYMLINK_HOPS) {
      throw new AhmaError('PATH_INVALID', `${path}: too many levels of symbolic links`);
    }
    const info = await lstat(path).catch(() => undefined);
    if (info?.isSymbolicLink() === true) {
      const target = await readlink(path);
      // Not resolve(): it folds ".." lexically, but the kernel follows symlinks before a ".." in
      // the target (a target "inner/../x" with inner -> /elsewhere/d means /elsewhere/x).
      const dir = dirname(path);
      const next = isAbsolute(target)
        ? target
        : dir.endsWith(sep)
          ? dir + target
          : dir + sep + target;
      return realpathLenient(next, hops + 1);
    }
    const parent = dirname(path);
    if (parent === path) return path;
    return join(await realpathLenient(parent, hops), basename(path));
  }
}
