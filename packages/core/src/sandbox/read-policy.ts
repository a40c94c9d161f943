// What a Linux command may read (R7.10). Landlock grants rights beneath paths and never takes one
// back, so "HOME but not ~/.ssh/id_ed25519" is granted as a cover: every entry of HOME whole
// except the denied one, and, on the way down to it, the directories themselves for listing only
// (docs/decisions/0002-confined-reads.md). The cover is computed once per server, on real paths,
// and handed to the helper as --read / --list / --rw rules.
import { readdirSync, type Dirent } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { z } from 'zod';
import policyData from '../../policy/sandbox.json' with { type: 'json' };
import { isInside } from '../paths/inside.js';
import { realPrefix, realpathOrUndefined } from '../paths/real-sync.js';

/** One entry of a deny list: a path (its last component may be a glob) and what stays readable. */
export interface DenyEntry {
  /** Absolute; only the last component may hold `*` or `?`. */
  readonly path: string;
  /** Entries of the same directory (globs) that the pattern does not deny. */
  readonly except: readonly string[];
  /** Which list denied it, for the message an agent reads ("the credential deny list"). */
  readonly list: string;
  /** What the path holds, for that message. */
  readonly why: string;
}

/** Something commands may reach: list directories beneath it, read (and execute), or also write. */
export interface Grant {
  readonly path: string;
  readonly access: 'list' | 'read' | 'write';
}

export interface ReadPolicy {
  readonly grants: readonly Grant[];
  readonly denies: readonly DenyEntry[];
}

/** One rule for the helper: `list` is reading directories only (on the way to a denied path). */
export interface Rule {
  readonly path: string;
  readonly access: 'read' | 'write' | 'list';
}

const entrySchema = z.strictObject({
  path: z.string().regex(/^(\/|~\/)/, 'a deny path is absolute or starts with ~/'),
  why: z.string().min(1),
  except: z.array(z.string().min(1)).optional(),
});

const policySchema = z.strictObject({
  $comment: z.string().optional(),
  system: z.array(z.string().regex(/^\//, 'a system path is absolute')),
  deny: z.record(z.string(), z.array(entrySchema)),
});

/** The shipped policy, checked when this module loads: a malformed file never denies less. */
const SHIPPED = policySchema.parse(policyData);

/** The directories every command may read and execute beneath (those that exist). */
export const SYSTEM_READ: readonly string[] = SHIPPED.system;

/** The list name of Ahma's own private state in messages. */
export const PRIVATE_STATE_LIST = "Ahma's private state";

/** The shipped deny lists with `~/` made HOME (entries under HOME are dropped when there is none). */
export function shippedDenies(home: string | undefined): DenyEntry[] {
  const denies: DenyEntry[] = [];
  for (const [list, entries] of Object.entries(SHIPPED.deny)) {
    for (const entry of entries) {
      const path = expandHome(entry.path, home);
      if (path !== undefined) {
        denies.push({
          path,
          except: entry.except ?? [],
          list: `the ${list} deny list`,
          why: entry.why,
        });
      }
    }
  }
  return denies;
}

/**
 * HOME when it can stand for `~`: an absolute path other than `/` (some service accounts have
 * HOME=/, which would make the whole system `~`).
 */
export function usableHome(home: string | undefined): string | undefined {
  return home !== undefined && isAbsolute(home) && resolve(home) !== '/' ? home : undefined;
}

/** `~` and `~/x` under `home`, an absolute path as is; undefined for them without a usable HOME. */
export function expandHome(path: string, home: string | undefined): string | undefined {
  if (path !== '~' && !path.startsWith('~/')) return resolve(path);
  if (home === undefined || !isAbsolute(home)) return undefined;
  return join(home, path.slice(2));
}

/** The deny entry that denies `path` (as spelled, or really), or undefined when none does. */
export function deniedBy(denies: readonly DenyEntry[], path: string): DenyEntry | undefined {
  const spellings = new Set([resolve(path), realPrefix(path)]);
  for (const spelling of spellings) {
    // The path itself, or a directory it lies in, matches an entry.
    for (let at = spelling; ; at = dirname(at)) {
      const hit = denies.find((deny) => matches(deny, at));
      if (hit !== undefined) return hit;
      if (at === dirname(at)) break;
    }
  }
  return undefined;
}

/**
 * The rules that grant every grant minus the denies, on real paths. A deny lying inside a grant
 * splits it (the directories on the way are listed, not read); a grant lying inside a deny is
 * kept (it was asked for by name: the server's own cache directory, an --allow-read). A symlink
 * met on the way is granted only through what it points to, so a link to a denied file is no way
 * round; a link pointing outside every grant is not followed.
 */
export function coverRules(policy: ReadPolicy): Rule[] {
  const denies = withRealPaths(policy.denies);
  const grants = policy.grants.flatMap((grant) => {
    const path = realpathOrUndefined(grant.path);
    return path === undefined ? [] : [{ path, access: grant.access }];
  });
  const rules = new Map<string, Rule['access']>();
  const add = (path: string, access: Rule['access']) => {
    const known = rules.get(path);
    if (known === undefined || rank(access) > rank(known)) rules.set(path, access);
  };
  for (const grant of grants) {
    // Only denies beneath the grant split it; one that contains it does not apply.
    const inside = denies.filter((deny) => isInside(dirname(deny.path), grant.path));
    cover(grant.path, grant.access, inside, add, new Set());
  }
  return [...rules].map(([path, access]) => ({ path, access }));
}

function cover(
  dir: string,
  access: Grant['access'],
  denies: readonly DenyEntry[],
  add: (path: string, access: Rule['access']) => void,
  seen: Set<string>,
): void {
  if (seen.has(dir)) return;
  seen.add(dir);
  const beneath = denies.filter((deny) => isInside(dirname(deny.path), dir));
  if (beneath.length === 0 || access === 'list') {
    add(dir, access);
    return;
  }
  add(dir, 'list');
  let entries: Dirent[];
  try {
    // With their types (d_type, or lstat where the file system has none): a link is known
    // without an lstat of every entry of HOME.
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return; // not a directory, or unreadable: nothing beneath it is granted
  }
  // The denies naming an entry of `dir`, and the entries with a deny further down.
  const here = beneath.filter((deny) => dirname(deny.path) === dir);
  const deeper = new Set(
    beneath
      .filter((deny) => dirname(deny.path) !== dir)
      .map((deny) => relative(dir, deny.path).split(sep)[0]),
  );
  for (const entry of entries) {
    if (here.some((deny) => namedBy(deny, entry.name))) continue;
    // A link needs no rule: what it points to is granted (or not) where it really lies.
    if (entry.isSymbolicLink()) continue;
    const path = join(dir, entry.name);
    if (deeper.has(entry.name)) cover(path, access, beneath, add, seen);
    else add(path, access);
  }
}

/** Whether `path` is what `deny` names: the same directory and a matching, not excepted name. */
function matches(deny: DenyEntry, path: string): boolean {
  return dirname(path) === dirname(deny.path) && namedBy(deny, basename(path));
}

/** Whether the entry `name` of the deny's directory is what it names (and not excepted). */
function namedBy(deny: DenyEntry, name: string): boolean {
  return (
    nameGlob(basename(deny.path)).test(name) &&
    !deny.except.some((except) => nameGlob(except).test(name))
  );
}

/** Each deny, and again at its real path when a link on the way leads elsewhere. */
function withRealPaths(denies: readonly DenyEntry[]): DenyEntry[] {
  const all: DenyEntry[] = [];
  for (const deny of denies) {
    all.push(deny);
    const dir = realPrefix(dirname(deny.path));
    const name = basename(deny.path);
    const literal = !/[*?]/.test(name);
    const real = literal ? realPrefix(join(dir, name)) : join(dir, name);
    if (real !== deny.path) all.push({ ...deny, path: real });
  }
  return all;
}

function rank(access: Rule['access']): number {
  return access === 'list' ? 0 : access === 'read' ? 1 : 2;
}

const globs = new Map<string, RegExp>();

/** A deny list glob over one name: `*` any run, `?` one character, the rest literal, all of it. */
export function nameGlob(pattern: string): RegExp {
  let regex = globs.get(pattern);
  if (regex === undefined) {
    const body = pattern
      .split('')
      .map((char) =>
        char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[\\^$.+()[\]{}|]/g, '\\$&'),
      )
      .join('');
    regex = new RegExp(`^${body}$`, 's');
    globs.set(pattern, regex);
  }
  return regex;
}
