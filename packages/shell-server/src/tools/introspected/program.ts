// SPEC §15 --introspect: which file a PROGRAM names, and what identifies its content. A name is
// looked up on PATH as the server's commands will find it; a path is taken as given (flags.ts
// lets only absolute ones through). The file's real path, size, mtime, device and inode are what
// the cache keys on: a package upgrade, a rebuild or an edit changes at least one of them.
import { constants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';

export interface ResolvedProgram {
  /** As --introspect named it (`grep`, `/opt/tool/bin/tool`). */
  readonly given: string;
  /**
   * The absolute path the tools run: the PATH entry found, not its real path, so a program that
   * reads its own name (a multi-call binary behind a link) is run as it was named.
   */
  readonly path: string;
  /** The file `path` leads to, links resolved. */
  readonly real: string;
  /** What identifies the file's content, as decimal strings (stat's bigint fields). */
  readonly identity: {
    readonly size: string;
    readonly mtimeNs: string;
    readonly dev: string;
    readonly ino: string;
  };
}

/** The program `given` names, or why it names none. */
export async function resolveProgram(
  given: string,
  pathVariable: string | undefined,
): Promise<ResolvedProgram | { readonly problem: string }> {
  const path = given.includes('/') ? given : await onPath(given, pathVariable);
  if (path === undefined) return { problem: 'not found on PATH' };
  if (!isAbsolute(path)) return { problem: 'a path must be absolute' };
  // A tool file's command is split at white space: such a path could not be run as one word.
  if (/\s/.test(path)) return { problem: `its path (${path}) holds white space` };
  let real: string;
  try {
    real = await realpath(path);
  } catch (error) {
    return { problem: `cannot be read (${errorCode(error)})` };
  }
  const info = await stat(real, { bigint: true }).catch(() => undefined);
  if (info?.isFile() !== true) return { problem: 'is not a regular file' };
  if (!(await executable(real))) return { problem: 'is not executable' };
  return {
    given,
    path,
    real,
    identity: {
      size: String(info.size),
      mtimeNs: String(info.mtimeNs),
      dev: String(info.dev),
      ino: String(info.ino),
    },
  };
}

/**
 * The first executable regular file named `name` in PATH's absolute directories. A relative entry
 * (an empty one means the working directory) would find a file the scope's commands put there.
 */
async function onPath(name: string, pathVariable: string | undefined): Promise<string | undefined> {
  for (const dir of (pathVariable ?? '').split(':')) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    const info = await stat(candidate).catch(() => undefined);
    if (info?.isFile() === true && (await executable(candidate))) return candidate;
  }
  return undefined;
}

function executable(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? 'unreadable';
}

/**
 * The directories of the programs named by their path, links resolved: such a program may lie
 * where commands read nothing (a build directory, /opt), and its tools must be able to run it. The
 * operator named it; ahma-introspect makes the same directory readable to read its help. A path
 * that does not resolve is left out here and reported when the programs are looked up.
 */
export async function programDirectories(programs: readonly string[]): Promise<string[]> {
  const paths = programs.filter((program) => isAbsolute(program));
  const real = await Promise.all(paths.map((path) => realpath(path).catch(() => undefined)));
  return [...new Set(real.filter((path) => path !== undefined).map((path) => dirname(path)))];
}
