// The denied paths that exist on this machine (the shipped deny lists: system secrets, the user's
// credentials), and whether the sandbox's Landlock rules grant any of them: a read or write rule at
// or above a denied path grants it, one beneath it grants part of it. Also a few of those files
// the server itself can read, for a real read through the sandbox (sandbox-probes.ts).
import { constants } from 'node:fs';
import { access, lstat, readdir, realpath } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { deniedBy, isInside, type DenyEntry, type Engine } from '@ahma/core';

export interface CredentialCheck {
  /** Denied paths present here (real paths). */
  readonly present: readonly string[];
  /** "rule read /x grants /x/y", one per grant found. */
  readonly granted: readonly string[];
  /** Denied regular files the server can read (at most `limit`): what a command must not. */
  readonly readable: readonly string[];
}

/** Denies of the private state and of `skip` (the doctor's own planted secret) are left out. */
export async function checkCredentialPaths(
  engine: Engine,
  skip: readonly string[],
  limit = 5,
): Promise<CredentialCheck> {
  const denies = engine.sandbox.policy.denies.filter(
    (deny) => !isInside(deny.path, engine.state.root) && !skip.includes(deny.path),
  );
  const present = new Set<string>();
  for (const deny of denies) {
    for (const path of await existing(deny)) present.add(path);
  }
  // A grant asked for by name (a writable path, --allow-read) may lie inside a denied one.
  const named = new Set(
    await Promise.all(
      engine.sandbox.policy.grants.map((grant) => realpath(grant.path).catch(() => grant.path)),
    ),
  );
  const granted: string[] = [];
  for (const path of present) {
    for (const rule of engine.sandbox.rules) {
      if (rule.access === 'list') continue;
      const above = isInside(path, rule.path);
      const beneath = !above && isInside(rule.path, path) && !named.has(rule.path);
      if (above || beneath) granted.push(`rule ${rule.access} ${rule.path} grants ${path}`);
    }
  }
  const readable: string[] = [];
  for (const path of present) {
    if (readable.length >= limit) break;
    const file = await readableFile(path);
    if (file !== undefined) readable.push(file);
  }
  return { present: [...present], granted, readable };
}

/** The real paths a deny entry names that exist (its last component may be a glob). */
async function existing(deny: DenyEntry): Promise<string[]> {
  const dir = dirname(deny.path);
  const candidates = /[*?]/.test(basename(deny.path))
    ? (await readdir(dir).catch(() => [] as string[]))
        .map((entry) => join(dir, entry))
        .filter((path) => deniedBy([deny], path) !== undefined)
    : [deny.path];
  const found: string[] = [];
  for (const candidate of candidates) {
    const real = await realpath(candidate).catch(() => undefined);
    if (real !== undefined) found.push(real);
  }
  return found;
}

/** The path when it is a readable regular file, else the first such file directly inside it. */
async function readableFile(path: string): Promise<string | undefined> {
  const stat = await lstat(path).catch(() => undefined);
  if (stat === undefined) return undefined;
  if (stat.isFile()) return (await canRead(path)) ? path : undefined;
  if (!stat.isDirectory()) return undefined;
  const entries = await readdir(path, { withFileTypes: true }).catch(() => []);
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const inside = join(path, entry.name);
    if (entry.isFile() && (await canRead(inside))) return inside;
  }
  return undefined;
}

function canRead(path: string): Promise<boolean> {
  return access(path, constants.R_OK).then(
    () => true,
    () => false,
  );
}
