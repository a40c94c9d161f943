// Trust hand-off files (R7.11): files a command could write in the scope that later run OUTSIDE
// any sandbox (git hooks and config, editor tasks, Ahma's own tool files, .envrc, .mcp.json; the
// list is data, policy/handoff.json). Two layers:
//
// - protection: on Linux the helper makes a mount namespace of its own in which each existing
//   hand-off path is bound onto itself read-only (--protect) and the directories on the way to one
//   that a command could rename are bound onto themselves (--pin), so nothing can be rebuilt
//   elsewhere (native/handoff.c). handoffMounts() computes those flags, once per sandbox;
// - detection: what cannot be protected (a path made after the namespace was, machines without
//   namespaces) is found by a cheap lstat snapshot before and after each command
//   (snapshotHandoff(), handoffChanges()) and reported.
//
// --allow-handoff-writes PATH (absolute here) leaves a path writable and unwatched.
import { lstatSync, mkdirSync, opendirSync, type BigIntStats } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { z } from 'zod';
import policyData from '../../policy/handoff.json' with { type: 'json' };
import { isInside } from '../paths/inside.js';
import { readRegularFileSync } from '../paths/read-regular.js';
import { realPrefix, realpathOrUndefined } from '../paths/real-sync.js';
import type { HandoffWrite } from '../process/execution-types.js';

const relativePath = z
  .string()
  .min(1)
  .refine(
    (path) => !isAbsolute(path) && path.split('/').every((part) => !['', '.', '..'].includes(part)),
    'a hand-off path is relative, without empty, . or .. components',
  );

const entrySchema = z.strictObject({
  path: relativePath,
  pin: z.boolean().optional(),
  why: z.string().min(1),
});

const policySchema = z.strictObject({
  $comment: z.string().optional(),
  scope: z.array(entrySchema),
  gitDir: z.array(entrySchema),
});

/** The shipped list, checked when this module loads: a malformed file never protects less. */
const SHIPPED = policySchema.parse(policyData);

/** A `*` component lists at most this many entries (a repository with more submodules is rare). */
const MAX_GLOB = 100;
/** A hand-off directory with an allowed path inside is protected entry by entry, up to this many. */
const MAX_COVER = 1000;
/** A snapshot records at most this many paths (directories' entries included). */
const MAX_SNAPSHOT = 400;
/** How deep a snapshot or a cover descends into a hand-off directory. */
const MAX_DEPTH = 8;

/** One hand-off path of this scope, as found (lexical: a link on the way is not resolved). */
interface Candidate {
  /** Absolute. */
  readonly path: string;
  /** A directory that stays writable but must not move (a file in its place is protected). */
  readonly pin: boolean;
  readonly why: string;
}

export interface HandoffMounts {
  /** Real paths the helper binds onto themselves read-only (--protect). */
  readonly protect: string[];
  /** Real paths the helper binds onto themselves read-write, so they cannot move (--pin). */
  readonly pin: string[];
}

/**
 * The helper's --protect and --pin paths for this scope: every existing hand-off path that
 * commands could write (it lies in `writable`) and that `allow` does not open up; and, when there
 * is any, every directory on the way to one that commands could rename (it lies strictly inside a
 * writable path: the scope in /tmp, .git, a submodule's git directory). Real paths, sorted.
 */
export function handoffMounts(
  scope: string,
  writable: readonly string[],
  allow: readonly string[],
): HandoffMounts {
  const allowed = allow.map(realPrefix);
  const realWritable = writable.map(realPrefix);
  const isWritable = (path: string) => realWritable.some((dir) => isInside(path, dir));
  const protect = new Set<string>();
  for (const candidate of candidates(scope)) {
    if (allowed.some((dir) => isInside(candidate.path, dir))) continue;
    const real = realpathOrUndefined(candidate.path);
    if (real === undefined || !isWritable(real)) continue;
    if (allowed.some((dir) => isInside(real, dir))) continue;
    const directory = lstatOrUndefined(real)?.isDirectory() === true;
    if (candidate.pin && directory) continue; // pinned below when it holds a protected path
    const inner = allowed.filter((dir) => dir !== real && isInside(dir, real));
    if (inner.length > 0 && directory) cover(real, inner, isWritable, protect, 0);
    else protect.add(real);
  }
  const pin = new Set<string>();
  for (const path of protect) {
    for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
      // Renaming dir needs write access to its parent: only a dir strictly inside a writable one.
      if (realWritable.some((root) => root !== dir && isInside(dir, root))) pin.add(dir);
    }
  }
  return { protect: [...protect].sort(), pin: [...pin].sort() };
}

/**
 * A repository without a hooks directory (cloned with an empty template, say) would get one from a
 * command, unprotected until the mounts are worked out again: an empty one is made first, as git
 * itself makes at init, so that it is bound read-only with the rest. Only in git directories that
 * exist and commands could write; a failure leaves it to detection.
 */
export function makeMissingHooksDirectories(scope: string, writable: readonly string[]): void {
  const realWritable = writable.map(realPrefix);
  for (const gitDir of gitDirectories(scope)) {
    const real = realpathOrUndefined(gitDir);
    if (real === undefined || lstatOrUndefined(real)?.isDirectory() !== true) continue;
    if (!realWritable.some((dir) => isInside(real, dir))) continue;
    try {
      mkdirSync(join(real, 'hooks'), { mode: 0o755 });
    } catch {
      // EEXIST, or not ours to make: the snapshot still reports what a command puts there.
    }
  }
}

/**
 * A hand-off directory with allowed paths inside: its other entries are protected one by one, and
 * the way down to an allowed path is covered the same way.
 */
function cover(
  dir: string,
  allowed: readonly string[],
  isWritable: (path: string) => boolean,
  protect: Set<string>,
  depth: number,
): void {
  // An entry beyond the bound stays writable; the snapshot still reports a change to it.
  for (const name of readDirectory(dir, MAX_COVER).names) {
    const path = join(dir, name);
    if (allowed.some((inner) => isInside(path, inner))) continue;
    const stats = lstatOrUndefined(path);
    if (stats === undefined) continue;
    if (allowed.some((inner) => isInside(inner, path))) {
      if (stats.isDirectory() && depth < MAX_DEPTH) {
        cover(path, allowed, isWritable, protect, depth + 1);
      }
      continue;
    }
    const real = stats.isSymbolicLink() ? realpathOrUndefined(path) : path;
    if (real !== undefined && isWritable(real)) protect.add(real);
  }
}

/** Every hand-off path of the scope, existing or not (a `*` expands to existing entries only). */
function candidates(scope: string): Candidate[] {
  const found: Candidate[] = [];
  const add = (base: string, entries: typeof SHIPPED.scope) => {
    for (const entry of entries) {
      for (const path of expand(base, entry.path)) {
        found.push({ path, pin: entry.pin === true, why: entry.why });
      }
    }
  };
  add(scope, SHIPPED.scope);
  for (const gitDir of gitDirectories(scope)) add(gitDir, SHIPPED.gitDir);
  return found;
}

/** base/pattern with each `*` component replaced by every entry of that directory. */
function expand(base: string, pattern: string): string[] {
  let paths = [base];
  for (const part of pattern.split('/')) {
    paths =
      part === '*'
        ? paths.flatMap((dir) => listDirectory(dir).map((name) => join(dir, name)))
        : paths.map((dir) => join(dir, part));
  }
  return paths;
}

/**
 * The scope's git directories: `.git` (also when it does not exist yet: it may be made), or, when
 * `.git` is a file (a worktree or a submodule), the directory it names and that one's common
 * directory (where a worktree's hooks and config live).
 */
function gitDirectories(scope: string): string[] {
  const dotGit = join(scope, '.git');
  const stats = lstatOrUndefined(dotGit);
  if (stats === undefined || !stats.isFile()) return [dotGit];
  const named = /^gitdir: *(.+?)\s*$/m.exec(readSmallFile(dotGit) ?? '')?.[1];
  if (named === undefined) return [dotGit];
  const gitDir = resolve(scope, named);
  const common = readSmallFile(join(gitDir, 'commondir'))?.trim();
  const dirs = [
    gitDir,
    ...(common === undefined || common === '' ? [] : [resolve(gitDir, common)]),
  ];
  return [...new Set(dirs)];
}

// ---- detection ---------------------------------------------------------------------------------

/** What the hand-off paths of a scope looked like at one moment (lstat signatures). */
export interface HandoffSnapshot {
  /** Path → signature (type, inode, mode, size, mtime and ctime in ns), for what exists. */
  readonly entries: ReadonlyMap<string, string>;
  /** Directories whose entries are all in `entries` (the bound was not reached in them). */
  readonly listed: ReadonlySet<string>;
  /** The hand-off paths themselves: compared whether they exist or not. */
  readonly roots: ReadonlySet<string>;
}

/** What changed at one hand-off path (the executor reports it as the result's hand-off write). */
export type HandoffChange = HandoffWrite;

/**
 * The hand-off paths of the scope now: each one (existing or not), a pinned directory by its
 * identity only (commands write inside it), the others with their entries, recursively, up to a
 * few hundred paths. `.sample` files of hooks directories (git's inert examples) are left out, and
 * so is everything `allow` opens up. Synchronous lstat: it runs before and after each command.
 */
export function snapshotHandoff(scope: string, allow: readonly string[]): HandoffSnapshot {
  const allowed = allow.map(realPrefix);
  const entries = new Map<string, string>();
  const listed = new Set<string>();
  const roots = new Set<string>();
  const visit = (path: string, depth: number) => {
    const stats = lstatOrUndefined(path);
    if (stats === undefined || entries.size >= MAX_SNAPSHOT) return;
    if (!stats.isDirectory()) {
      entries.set(path, signature(stats));
      return;
    }
    const listing =
      depth < MAX_DEPTH ? readDirectory(path, MAX_SNAPSHOT - entries.size) : undefined;
    const kept = listing?.names.filter(
      (name) =>
        !(name.endsWith('.sample') && basename(path) === 'hooks') &&
        !allowed.some((dir) => isInside(join(path, name), dir)),
    );
    if (
      listing?.complete !== true ||
      kept === undefined ||
      entries.size + 1 + kept.length > MAX_SNAPSHOT
    ) {
      // Not listed: the directory's own times still show that an entry came or went.
      entries.set(path, signature(stats));
      return;
    }
    entries.set(path, identity(stats));
    listed.add(path);
    for (const name of kept) visit(join(path, name), depth + 1);
  };
  for (const candidate of candidates(scope)) {
    if (allowed.some((dir) => isInside(candidate.path, dir))) continue;
    roots.add(candidate.path);
    const stats = lstatOrUndefined(candidate.path);
    if (candidate.pin && stats?.isDirectory() === true)
      entries.set(candidate.path, identity(stats));
    else visit(candidate.path, 0);
  }
  return { entries, listed, roots };
}

/**
 * What changed between two snapshots of the same scope, sorted by path. A path is compared when
 * it is a hand-off path itself or its directory was listed both times; so a new hand-off directory
 * is one `created`, not one per file in it.
 */
export function handoffChanges(before: HandoffSnapshot, after: HandoffSnapshot): HandoffChange[] {
  const changes: HandoffChange[] = [];
  const paths = [...new Set([...before.entries.keys(), ...after.entries.keys()])].sort();
  for (const path of paths) {
    const parent = dirname(path);
    const comparable =
      before.roots.has(path) ||
      after.roots.has(path) ||
      (before.listed.has(parent) && after.listed.has(parent));
    if (!comparable) continue;
    const was = before.entries.get(path);
    const is = after.entries.get(path);
    if (was === undefined && is !== undefined) changes.push({ path, change: 'created' });
    else if (was !== undefined && is === undefined) changes.push({ path, change: 'removed' });
    else if (was !== is) changes.push({ path, change: 'changed' });
  }
  return changes;
}

/** Everything that tells two versions of a file apart, cheaply. */
function signature(stats: BigIntStats): string {
  return `${identity(stats)}:${String(stats.size)}:${String(stats.mtimeNs)}:${String(stats.ctimeNs)}`;
}

/** Which file it is (a directory listed entry by entry needs no more). */
function identity(stats: BigIntStats): string {
  return `${String(stats.mode)}:${String(stats.ino)}`;
}

/** What to stat around each command when the hand-off paths are mounted (see handoffProbes). */
export interface HandoffProbes {
  /** Compared by inode and change time: a change is a new entry, or a file replaced or written. */
  readonly changing: readonly string[];
  /** Compared by inode only: the protected directories (what changes inside shows through). */
  readonly replaced: readonly string[];
}

/**
 * What can still change when the hand-off paths are mounted read-only: the hand-off paths that do
 * not exist (nothing was there to mount: a command may make them), the pinned directories other
 * than the scope and `.git` (a new submodule's git directory appears in one), and the mounted
 * paths themselves as seen from outside (a file renamed over one, a directory made anew: the bind
 * mount would keep showing the old one). A stat of these before and after each command
 * (probeState) tells whether anything needs a full snapshot.
 */
export function handoffProbes(
  scope: string,
  allow: readonly string[],
  mounts: { readonly protect: readonly string[]; readonly pin: readonly string[] },
): HandoffProbes {
  const allowed = allow.map(realPrefix);
  const absent = candidates(scope)
    .map((candidate) => candidate.path)
    .filter(
      (path) => !allowed.some((dir) => isInside(path, dir)) && lstatOrUndefined(path) === undefined,
    );
  const realScope = realPrefix(scope);
  const busy = new Set([realScope, join(realScope, '.git')]);
  const directory = (path: string) => lstatOrUndefined(path)?.isDirectory() === true;
  return {
    changing: [
      ...absent,
      ...mounts.pin.filter((dir) => !busy.has(dir)),
      ...mounts.protect.filter((path) => !directory(path)),
    ],
    replaced: mounts.protect.filter(directory),
  };
}

/** One line of what the probed paths are now (`-` for each that is absent). */
export function probeState(probes: HandoffProbes): string {
  const state = (path: string, withTime: boolean) => {
    const stats = lstatOrUndefined(path);
    if (stats === undefined) return '-';
    return withTime ? `${String(stats.ino)}:${String(stats.ctimeNs)}` : String(stats.ino);
  };
  return [
    ...probes.changing.map((path) => state(path, true)),
    ...probes.replaced.map((path) => state(path, false)),
  ].join(' ');
}

// ---- messages ----------------------------------------------------------------------------------

/**
 * For an absolute path at or beneath a hand-off path of the scope: one line saying why commands
 * cannot change it and how to allow it; for a pinned directory itself, that it cannot be moved.
 * Otherwise undefined.
 */
export function describeHandoff(path: string, scope: string): string | undefined {
  const target = resolve(path);
  const realTarget = realPrefix(target);
  for (const candidate of candidates(scope)) {
    const real = realpathOrUndefined(candidate.path);
    const inside = (dir: string) =>
      isInside(target, dir) || isInside(realTarget, dir) || isInside(target, realPrefix(dir));
    if (!inside(candidate.path) && (real === undefined || !inside(real))) continue;
    const shown = display(target, scope);
    const flag = `--allow-handoff-writes ${display(candidate.path, scope)}`;
    const directory = lstatOrUndefined(candidate.path)?.isDirectory() !== false;
    if (candidate.pin && directory) {
      if (target !== candidate.path && realTarget !== real) continue; // writable inside
      return `\`${shown}\` holds hand-off files (${candidate.why}): commands cannot rename or remove it; allow it with ${flag}`;
    }
    return `\`${shown}\` is a hand-off file (${candidate.why}): commands cannot create or change it; allow it with ${flag}`;
  }
  return undefined;
}

/** Relative to the scope when inside it, else absolute. */
function display(path: string, scope: string): string {
  if (!isInside(path, scope)) return path;
  const rest = relative(scope, path);
  return rest === '' ? '.' : rest.split(sep).join('/');
}

// ---- file system helpers -----------------------------------------------------------------------

/** undefined when there is nothing there (or a component on the way is not a directory). */
function lstatOrUndefined(path: string): BigIntStats | undefined {
  try {
    return lstatSync(path, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/**
 * A directory's entries, sorted; [] when it cannot be listed. Reads at most `limit` of them (a
 * command can fill a directory): the rest are not there, and `complete` says so.
 */
function readDirectory(dir: string, limit: number): { names: string[]; complete: boolean } {
  const names: string[] = [];
  let complete = true;
  try {
    const handle = opendirSync(dir);
    try {
      for (let entry = handle.readSync(); entry !== null; entry = handle.readSync()) {
        if (names.length === limit) {
          complete = false;
          break;
        }
        names.push(entry.name);
      }
    } finally {
      handle.closeSync();
    }
  } catch {
    return { names: [], complete: false };
  }
  return { names: names.sort(), complete };
}

const listDirectory = (dir: string) => readDirectory(dir, MAX_GLOB).names;

/**
 * A small regular file (a .git file, commondir: a command may have put a FIFO or a link to a
 * device there), undefined when there is none or it is anything else.
 */
function readSmallFile(path: string): string | undefined {
  if (lstatOrUndefined(path)?.isFile() !== true) return undefined;
  try {
    return readRegularFileSync(path, 4096);
  } catch {
    return undefined;
  }
}
