// Toolchain profiles (R7.14): the extra paths a toolchain's commands read and write (cargo's
// download caches, ~/.android for adb), shipped as data in policy/profiles.json and checked before
// their first use. The operator enables them (--profile, or the bundles given to --tools); a file
// inside the scope never does. At start the engine turns the enabled profiles and the operator's
// --allow-read / --allow-write into paths (prepareGrants): missing write directories are made where
// that is safe, and nothing a deny entry covers is granted (the file's $comment has the rules).
import { lstat, mkdir, realpath, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import profileData from '../../policy/profiles.json' with { type: 'json' };
import { closestMatch } from '../definition/suggest.js';
import { AhmaError } from '../errors.js';
import { hostPatternProblem } from '../network/host-rules.js';
import { isInside } from '../paths/inside.js';
import { deniedBy, expandHome, shippedDenies, usableHome, type DenyEntry } from './read-policy.js';

const profilePath = z
  .string()
  .regex(/^(\/|~\/)/, 'a profile path is absolute or starts with ~/')
  .refine(
    (path) => !path.split('/').some((segment) => segment === '.' || segment === '..'),
    'a profile path has no "." or ".." segment',
  )
  .refine(
    (path) => !['/', '~/'].includes(path.replace(/\/+$/, '/')),
    'a profile path is never / or HOME itself',
  );

const profileSchema = z.strictObject({
  description: z.string().min(1),
  read: z.array(profilePath),
  write: z.array(profilePath),
  write_files: z.array(profilePath).optional(),
  /** R7.17: hosts its commands reach through the egress proxy (`--network proxy`). */
  hosts: z
    .array(
      z.string().superRefine((host, context) => {
        const problem = hostPatternProblem(host);
        if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
      }),
    )
    .optional(),
});

const profilesSchema = z.strictObject({
  $comment: z.string().optional(),
  profiles: z.record(z.string().regex(/^[a-z][a-z0-9-]*$/), profileSchema),
});

export type Profile = z.infer<typeof profileSchema>;

/** A HOME no machine has, to check `~/` paths against the `~/` deny entries at load. */
const CHECK_HOME = '/nonexistent-ahma-profile-home';

/**
 * The profiles in `data`, or an error naming the first problem: malformed data, or a path that
 * would grant what a shipped deny entry protects (a read or write path inside one, a write path
 * holding one).
 */
export function checkProfiles(data: unknown): Readonly<Record<string, Profile>> {
  const { profiles } = profilesSchema.parse(data);
  const denies = shippedDenies(CHECK_HOME);
  for (const [name, profile] of Object.entries(profiles)) {
    for (const { path, access } of pathsOf(profile)) {
      const expanded = expandHome(path, CHECK_HOME) ?? path;
      const problem = grantProblem(expanded, access, denies);
      if (problem !== undefined) {
        throw new Error(`sandbox profile "${name}": ${path}: ${problem}`);
      }
    }
  }
  return profiles;
}

/** The shipped profiles' names, as the file lists them (for --help and the MTDF schema). */
export const PROFILE_NAMES: readonly string[] = Object.keys(profileData.profiles);

let shipped: Readonly<Record<string, Profile>> | undefined;

/**
 * The shipped profiles by name, checked on first use rather than when this module loads: the check
 * costs every start about 20 ms, and most enable no profile. A bad file still never grants.
 */
export function shippedProfiles(): Readonly<Record<string, Profile>> {
  return (shipped ??= checkProfiles(profileData));
}

/** Why `name` is no profile (the known ones, and the closest), or undefined when it is one. */
export function profileProblem(name: string): string | undefined {
  if (Object.hasOwn(shippedProfiles(), name)) return undefined;
  const known = PROFILE_NAMES;
  const suggestion = closestMatch(name, known);
  return (
    `unknown sandbox profile "${name}"` +
    (suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`) +
    `; profiles: ${known.join(', ')}`
  );
}

/**
 * The paths the named profiles grant, `~/` made `home` (dropped without a usable HOME); write
 * holds the write directories and files. Throws CONFIG_INVALID for an unknown name.
 */
export function profileGrants(
  names: readonly string[],
  home: string | undefined,
): { read: string[]; write: string[] } {
  const paths = profilePaths(names, home);
  return {
    read: paths.filter((each) => each.kind === 'read').map((each) => each.path),
    write: paths.filter((each) => each.kind !== 'read').map((each) => each.path),
  };
}

/** R7.17: the hosts the named profiles' commands reach. Throws CONFIG_INVALID for an unknown name. */
export function profileHosts(names: readonly string[]): string[] {
  return [
    ...new Set(
      [...new Set(names)].flatMap((name) => {
        const problem = profileProblem(name);
        if (problem !== undefined) throw new AhmaError('CONFIG_INVALID', problem);
        return shippedProfiles()[name]?.hosts ?? [];
      }),
    ),
  ];
}

export interface GrantRequest {
  /** The server's HOME, what `~/` means (undefined or not absolute: `~/` paths are dropped). */
  readonly home: string | undefined;
  /** Profiles to enable (--profile, and those the bundles given to --tools name). */
  readonly profiles: readonly string[];
  /** The operator's --allow-read paths: absolute, `~/`, or relative to the working directory. */
  readonly read: readonly string[];
  /** The operator's --allow-write paths (they must exist). */
  readonly write: readonly string[];
  /** The operator's --deny-read paths: a profile path they cover is not granted. */
  readonly denyRead: readonly string[];
}

export interface PreparedGrants {
  /** More paths commands may read. */
  readonly read: string[];
  /** More paths commands may write (each exists). */
  readonly write: string[];
  /** The profile paths left out, each with why (for the log). */
  readonly skipped: string[];
  /** The profile directories and files made now. */
  readonly created: string[];
}

/**
 * The extra paths commands may read and write: the operator's as given (`~/` made HOME), then the
 * profiles'. A profile's missing write directory or file is made (empty) when its parent is a
 * directory of the server's user and no link; otherwise, or when its real location lies in a deny
 * entry (or --deny-read), it is skipped. Throws CONFIG_INVALID for an unknown profile and for an
 * --allow-write path that does not exist.
 */
export async function prepareGrants(request: GrantRequest): Promise<PreparedGrants> {
  const home = usableHome(request.home);
  const paths = profilePaths(request.profiles, home);
  const read = request.read.flatMap((path) => expandHome(path, home) ?? []);
  const write: string[] = [];
  for (const path of request.write) {
    const expanded = expandHome(path, home);
    // realpath: the engine grants where the path really lies, so a broken link is no path either.
    if (expanded === undefined || (await realpath(expanded).catch(() => undefined)) === undefined) {
      throw new AhmaError(
        'CONFIG_INVALID',
        `--allow-write ${path}: no such file or directory (create it, or leave it out)`,
      );
    }
    write.push(expanded);
  }
  const denies: DenyEntry[] = [
    ...shippedDenies(home),
    ...request.denyRead.flatMap((path) => {
      const expanded = expandHome(path, home);
      return expanded === undefined
        ? []
        : [{ path: expanded, except: [], list: '--deny-read', why: 'denied by the operator' }];
    }),
  ];
  const skipped: string[] = [];
  const created: string[] = [];
  for (const { path, kind, profile } of paths) {
    const skip = (why: string) => skipped.push(`sandbox profile "${profile}": ${path} ${why}`);
    if (!(await exists(path))) {
      if (kind === 'read') {
        skip('does not exist: not granted');
        continue;
      }
      const refusal = await creationProblem(path);
      if (refusal !== undefined) {
        skip(`does not exist and is not made (${refusal}): not granted`);
        continue;
      }
      try {
        if (kind === 'dir') await mkdir(path);
        else await writeFile(path, '', { flag: 'wx' });
        created.push(path);
      } catch (error) {
        if (!(await exists(path))) {
          skip(`could not be made (${error instanceof Error ? error.message : String(error)})`);
          continue;
        }
      }
    }
    // Where it really lies: a link must lead nowhere a deny entry covers.
    const real = await realpath(path).catch(() => undefined);
    const access = kind === 'read' ? 'read' : 'write';
    const really = (problem: string | undefined) =>
      problem === undefined ? undefined : `(really ${real ?? ''}) ${problem}`;
    const problem =
      real === undefined
        ? 'is a broken link'
        : (grantProblem(path, access, denies) ??
          (real === path ? undefined : really(grantProblem(real, access, denies))));
    if (problem !== undefined) {
      skip(`${problem}: not granted`);
      continue;
    }
    (kind === 'read' ? read : write).push(path);
  }
  return { read: [...new Set(read)], write: [...new Set(write)], skipped, created };
}

interface ProfilePath {
  readonly profile: string;
  readonly path: string;
  readonly kind: 'read' | 'dir' | 'file';
}

function profilePaths(names: readonly string[], home: string | undefined): ProfilePath[] {
  const paths: ProfilePath[] = [];
  for (const name of new Set(names)) {
    const problem = profileProblem(name);
    if (problem !== undefined) throw new AhmaError('CONFIG_INVALID', problem);
    const profile = shippedProfiles()[name];
    if (profile === undefined) continue;
    const usable = usableHome(home);
    const add = (list: readonly string[], kind: ProfilePath['kind']) => {
      for (const path of list) {
        const expanded = expandHome(path, usable);
        if (expanded !== undefined) paths.push({ profile: name, path: expanded, kind });
      }
    };
    add(profile.read, 'read');
    add(profile.write, 'dir');
    add(profile.write_files ?? [], 'file');
  }
  return paths;
}

/** Each path of a profile with what it would get. */
function pathsOf(profile: Profile): { path: string; access: 'read' | 'write' }[] {
  return [
    ...profile.read.map((path) => ({ path, access: 'read' as const })),
    ...[...profile.write, ...(profile.write_files ?? [])].map((path) => ({
      path,
      access: 'write' as const,
    })),
  ];
}

/**
 * Why granting `path` would reach what a deny entry protects: it lies in one, or (a write path)
 * holds one. A read grant holding a deny entry is safe: the cover leaves the entry out.
 */
function grantProblem(
  path: string,
  access: 'read' | 'write',
  denies: readonly DenyEntry[],
): string | undefined {
  const inside = deniedBy(denies, path);
  if (inside !== undefined) return `lies in ${inside.path} (${inside.list}: ${inside.why})`;
  if (access === 'write') {
    const held = denies.find((deny) => isInside(dirname(deny.path), path));
    if (held !== undefined) return `would hold ${held.path} (${held.list}: ${held.why})`;
  }
  return undefined;
}

/** Why the server will not make `path`: its parent must be a directory of this user, no link. */
async function creationProblem(path: string): Promise<string | undefined> {
  const parent = dirname(path);
  const stat = await lstat(parent).catch(() => undefined);
  if (stat === undefined) return `${parent} does not exist`;
  if (stat.isSymbolicLink()) return `${parent} is a link`;
  if (!stat.isDirectory()) return `${parent} is not a directory`;
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) return `${parent} belongs to another user`;
  return undefined;
}

async function exists(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => undefined)) !== undefined;
}
