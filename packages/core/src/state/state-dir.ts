// Ahma's private state (R7.6): what the server itself writes (full-output logs) lives in a
// directory no command can write, so no command can plant a link there for the unconfined server
// to write through. The root is chosen outside every writable path and created 0700:
//
//   <root>/servers/<owner>/output/   this server's logs (only the server writes here)
//   <root>/servers/<owner>/args/     file_arg values (only the server writes; commands read them)
//   <root>/caches/<owner>/           the tool caches commands are pointed at (writable by them)
//
// <owner> names the server's machine, boot, pid and start time (owner.ts), so the next server to
// start can tell a directory left by a killed server from a live one's, and sweep it.
import { chmod, lstat, mkdir, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { AhmaError } from '../errors.js';
import { ownerName, type OwnerTag } from './owner.js';
import { isInside, overlaps } from '../paths/inside.js';
import { errorCode, resolveReal, type LabelledPath } from './paths.js';

/** Environment variable (and the server's --state-dir) naming the root explicitly. */
export const STATE_DIR_ENV = 'AHMA_STATE_DIR';

export interface StateDirOptions {
  /** The root named by the operator (--state-dir); the only candidate when given. */
  readonly root?: string | undefined;
  /** Where XDG_STATE_HOME, HOME and XDG_RUNTIME_DIR are read. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Every path commands may write (real paths): the root must overlap none. */
  readonly writable: readonly LabelledPath[];
  readonly owner: OwnerTag;
}

export interface StateDir {
  /** Real path of the private root (0700). */
  readonly root: string;
  /** This server's private directory, and its logs directory inside it. */
  readonly serverDir: string;
  readonly logDir: string;
  /**
   * Where file_arg values are written for commands to read (R7.10: the one part of the private
   * state commands may read; they cannot write it).
   */
  readonly argsDir: string;
  /** This server's cache directory: commands write here, so it is not inside serverDir. */
  readonly cacheDir: string;
}

interface Candidate {
  readonly path: string;
  readonly origin: string;
}

/** Chooses the root, verifies it, and creates this server's directories in it. */
export async function createStateDir(options: StateDirOptions): Promise<StateDir> {
  const refusals: string[] = [];
  for (const candidate of candidates(options)) {
    const problem = await unsuitable(candidate.path, options.writable);
    if (problem !== undefined) {
      refusals.push(`  ${candidate.origin} = ${candidate.path}: ${problem}`);
      continue;
    }
    try {
      const root = await privateDirectory(candidate.path);
      // Checked again on the real path of what now exists: a link in its way would show here.
      const after = await unsuitable(root, options.writable);
      if (after !== undefined) {
        refusals.push(`  ${candidate.origin} = ${candidate.path}: ${after}`);
        continue;
      }
      return await serverDirectories(root, options.owner);
    } catch (error) {
      refusals.push(`  ${candidate.origin} = ${candidate.path}: ${describe(error)}`);
    }
  }
  throw new AhmaError(
    'STATE_DIR_UNSAFE',
    [
      'Ahma found no place for its private state (the full-output logs it writes) outside the paths',
      `commands may write (${options.writable.map((entry) => entry.path).join(', ')}):`,
      ...refusals,
      'A command must not be able to write where the server writes, or it could plant a link there.',
      `To fix: name a directory outside those paths with --state-dir DIR (${STATE_DIR_ENV}), or set`,
      'XDG_STATE_HOME to one.',
    ].join('\n'),
  );
}

/**
 * Where a server would put its private state, in order of preference (the first that exists is
 * where a running or past server put it): for tools that read it without starting a server.
 */
export function stateRootCandidates(
  root: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  return candidates({ root, env }).map((candidate) => candidate.path);
}

/** --state-dir alone when given; else $XDG_STATE_HOME/ahma, ~/.local/state/ahma, $XDG_RUNTIME_DIR/ahma. */
function candidates(options: Pick<StateDirOptions, 'root' | 'env'>): Candidate[] {
  if (options.root !== undefined && options.root !== '') {
    return [{ path: resolve(options.root), origin: `--state-dir (${STATE_DIR_ENV})` }];
  }
  const env = options.env;
  const absolute = (value: string | undefined) =>
    value !== undefined && isAbsolute(value) ? value : undefined;
  const list: Candidate[] = [];
  const stateHome = absolute(env['XDG_STATE_HOME']);
  if (stateHome !== undefined) {
    list.push({ path: join(stateHome, 'ahma'), origin: '$XDG_STATE_HOME/ahma' });
  }
  const home = absolute(env['HOME']) ?? absolute(homedir());
  if (home !== undefined) {
    list.push({ path: join(home, '.local', 'state', 'ahma'), origin: '~/.local/state/ahma' });
  }
  const runtime = absolute(env['XDG_RUNTIME_DIR']);
  if (runtime !== undefined) {
    list.push({ path: join(runtime, 'ahma'), origin: '$XDG_RUNTIME_DIR/ahma' });
  }
  return list;
}

/** Why `path` cannot hold private state: it overlaps a writable path (as spelled, or really). */
async function unsuitable(
  path: string,
  writable: readonly LabelledPath[],
): Promise<string | undefined> {
  let real: string;
  try {
    real = await resolveReal(path);
  } catch (error) {
    return describe(error);
  }
  for (const spelling of new Set([resolve(path), real])) {
    const clash = writable.find((entry) => overlaps(spelling, entry.path));
    if (clash !== undefined) {
      return isInside(spelling, clash.path)
        ? `it is inside ${clash.label} (${clash.path}), which commands may write`
        : `it contains ${clash.label} (${clash.path}), which commands may write`;
    }
  }
  return undefined;
}

/** Creates (or adopts) the root: a real directory, ours, not a link, mode 0700. Its real path. */
async function privateDirectory(path: string): Promise<string> {
  await mkdir(dirname(path), { recursive: true });
  await ownDirectory(path, false);
  return realpath(path);
}

/** This server's two directories, each made by one mkdir that fails if anything is there. */
async function serverDirectories(root: string, owner: OwnerTag): Promise<StateDir> {
  await ownDirectory(join(root, 'servers'), false);
  await ownDirectory(join(root, 'caches'), false);
  const name = ownerName(owner);
  const serverDir = join(root, 'servers', name);
  await ownDirectory(serverDir, true);
  const logDir = join(serverDir, 'output');
  await ownDirectory(logDir, true);
  const argsDir = join(serverDir, 'args');
  await ownDirectory(argsDir, true);
  const cacheDir = join(root, 'caches', name);
  await ownDirectory(cacheDir, true);
  return { root, serverDir, logDir, argsDir, cacheDir };
}

/**
 * mkdir with mode 0700; an existing entry is accepted only when not `fresh` and when lstat shows a
 * directory (not a link) owned by this user. Group and other access is taken away.
 */
async function ownDirectory(path: string, fresh: boolean): Promise<void> {
  try {
    await mkdir(path, { mode: 0o700 });
  } catch (error) {
    if (fresh || errorCode(error) !== 'EEXIST') throw error;
  }
  const info = await lstat(path);
  if (!info.isDirectory()) {
    throw new Error(`${path} is ${info.isSymbolicLink() ? 'a symbolic link' : 'not a directory'}`);
  }
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) {
    throw new Error(
      `${path} belongs to uid ${String(info.uid)}, not to this user (${String(uid)})`,
    );
  }
  if ((info.mode & 0o077) !== 0) await chmod(path, 0o700);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
