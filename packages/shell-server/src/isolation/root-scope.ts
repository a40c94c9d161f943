// The sandbox scope an isolated session takes from its client's first root (R8D.7, R8D.15). A root
// is the client's to name but not the client's to widen: any local process can reach the HTTP
// port (a sandboxed command included), so a root is accepted only when it is
// - a file:// URI naming an existing directory, resolved to its real path as the CLIENT's path:
//   links are followed here, and no directory passed through may lie on a pseudo file system (a
//   root of /proc/self, or a link to /proc/self/cwd, would otherwise be resolved by the server as
//   the server: /proc/<server pid>, the server's own directory);
// - the same as or beneath one of the allowed roots (--allowed-roots, default the server's scope);
// - neither `/`, nor the temp directory or $HOME themselves (nor a directory holding them);
// - apart from the server's private state: the sessions' processes keep their state there, so a
//   scope that holds it, or lies in it, would let one session's commands write another's.
// Anything else is refused with one line that names the root and, where it helps, the flag.
import { lstat, readlink, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, parse, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AhmaError, isInside, overlaps, tempDirectory, type Environment } from '@ahma/core';
import { pseudoFileSystem } from './file-system.js';

/** What a session's root is checked against; every path a real path. */
export interface RootPolicy {
  /** A root must be one of these or lie beneath one (--allowed-roots; default the scope). */
  readonly allowed: readonly string[];
  /** Directories a root may be neither equal to nor hold (the temp directory, $HOME), by label. */
  readonly forbidden: readonly { readonly path: string; readonly label: string }[];
  /** A root may neither hold nor lie in these (the server's private state). */
  readonly privatePaths: readonly string[];
}

/**
 * The policy of a server: `allowedRoots` as given (--allowed-roots; empty = the scope), each
 * resolved to an existing directory; the temp directory and $HOME of `env` forbidden.
 */
export async function rootPolicy(options: {
  readonly allowedRoots: readonly string[];
  readonly scope: string;
  readonly env: Environment;
  readonly privatePaths: readonly string[];
}): Promise<RootPolicy> {
  const allowed: string[] = [];
  for (const given of options.allowedRoots.length > 0 ? options.allowedRoots : [options.scope]) {
    const real = await realpath(given).catch(() => undefined);
    if (real === undefined || !(await stat(real)).isDirectory()) {
      throw refusal(`--allowed-roots: ${given} is not an existing directory`);
    }
    allowed.push(real);
  }
  const forbidden: { path: string; label: string }[] = [];
  const home = options.env['HOME'];
  for (const [path, label] of [
    [tempDirectory(options.env), 'the temp directory'],
    [home === undefined || home === '' ? undefined : home, 'the home directory'],
  ] as const) {
    const real = path === undefined ? undefined : await realpath(path).catch(() => undefined);
    if (real !== undefined) forbidden.push({ path: real, label });
  }
  return { allowed, forbidden, privatePaths: options.privatePaths };
}

export async function scopeOfRoot(uri: string, policy: RootPolicy): Promise<string> {
  const origin = `the client's first root ${uri}`;
  let given: string;
  try {
    if (!uri.startsWith('file:')) throw new Error('not a file URI');
    given = fileURLToPath(uri);
  } catch {
    throw refusal(`${origin} is not a file:// URI of a local directory`);
  }
  const scope = await resolveAsClient(given, origin);
  if (!(await stat(scope)).isDirectory()) throw refusal(`${origin} is not a directory`);
  if (parse(scope).root === scope) {
    throw refusal(`${origin} is the filesystem root: commands could write anywhere`);
  }
  const overlapping = policy.privatePaths.find((path) => overlaps(scope, path));
  if (overlapping !== undefined) {
    throw refusal(
      `${origin} overlaps the server's private state ${overlapping}, which sessions must not write`,
    );
  }
  const held = policy.forbidden.find((entry) => isInside(entry.path, scope));
  if (held !== undefined) {
    throw refusal(
      `${origin} (${scope}) ${scope === held.path ? 'is' : 'holds'} ${held.label} ${held.path}, which no session may take as its sandbox scope`,
    );
  }
  if (!policy.allowed.some((allowed) => isInside(scope, allowed))) {
    throw refusal(
      `${origin} (${scope}) lies outside every allowed root (${policy.allowed.join(', ')}); a session's root must be one of them or lie beneath one: the server's --allowed-roots DIR[,DIR…] names them`,
    );
  }
  return scope;
}

/** More links than this in one path is a loop (the kernel's own bound is 40 too). */
const MAX_LINKS = 40;

/**
 * The real path of `given`, resolved here component by component, every link followed by hand
 * (never by realpath, which would resolve /proc/self as the SERVER), and refused as soon as any
 * directory it passes through lies on a pseudo file system.
 */
async function resolveAsClient(given: string, origin: string): Promise<string> {
  const pending = given.split(sep).filter((part) => part !== '');
  let current: string = sep;
  let links = 0;
  await refusePseudo(current, origin);
  for (let part = pending.shift(); part !== undefined; part = pending.shift()) {
    if (part === '.') continue;
    if (part === '..') {
      current = dirname(current); // `current` holds no link: its parent is its real parent
      continue;
    }
    const next = join(current, part);
    const info = await lstat(next).catch(() => undefined);
    if (info === undefined) throw refusal(`${origin} does not exist`);
    if (info.isSymbolicLink()) {
      links += 1;
      if (links > MAX_LINKS) throw refusal(`${origin} has too many levels of symbolic links`);
      const target = await readlink(next);
      pending.unshift(...target.split(sep).filter((piece) => piece !== ''));
      if (isAbsolute(target)) current = sep;
      continue;
    }
    await refusePseudo(next, origin);
    current = next;
  }
  return current;
}

async function refusePseudo(path: string, origin: string): Promise<void> {
  const type = await pseudoFileSystem(path);
  if (type !== undefined) {
    throw refusal(
      `${origin} lies on the kernel's ${type} file system (at ${path}), which no session may take as its sandbox scope`,
    );
  }
}

function refusal(message: string): AhmaError {
  return new AhmaError('SCOPE_INVALID', message);
}
