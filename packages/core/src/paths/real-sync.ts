// Real paths, synchronously: for the sandbox's policy (worked out once per server, or per refused
// path in a result), where an await per path would buy nothing. Calls use argv/paths.ts.
import { realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/** The real path of `path`, or undefined when it does not exist (or cannot be resolved). */
export function realpathOrUndefined(path: string): string | undefined {
  try {
    // The kernel's walk (realpath(3)): the JavaScript one lstats each component of each path.
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

/**
 * The real path of the longest existing prefix of `path` (made absolute), with the rest appended:
 * where a path that does not exist yet would really be.
 */
export function realPrefix(path: string): string {
  const rest: string[] = [];
  for (let at = resolve(path); ; at = dirname(at)) {
    const real = realpathOrUndefined(at);
    if (real !== undefined) return join(real, ...rest.reverse());
    if (at === dirname(at)) return resolve(path);
    rest.push(basename(at));
  }
}
