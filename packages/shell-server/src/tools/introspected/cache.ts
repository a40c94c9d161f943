// SPEC §15 --introspect: what a program's help yielded, kept in Ahma's private state so that the
// next start serves it without running the program again. The key is the program's file (real
// path, size, mtime, device, inode), the path the tools run, the tool name and the version of
// @ahma/introspect (a new one may read the same help differently): any change reads the help again.
//
// A cache file becomes tool definitions that run commands, so it is never trusted blindly: it is
// read only when it is a regular file of this user that nobody else can read or write, in a 0700
// directory of this user, no larger than a tool file could be, written for exactly this key, and
// its definition passes the checks a tool file passes and runs the program it was read from.
// Anything else is ignored (and said), and the help is read again. Files are written atomically
// (a crash leaves the old one or the new one) with mode 0600.
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { DocumentChecker, writeFileAtomicAt } from '@ahma/core';
import { readPrivateFile } from '@ahma/remote';
import type { ResolvedProgram } from './program.js';

/** Bumped when the record's shape changes: older records are then read again, not misread. */
const RECORD_FORMAT = 1;
/** Larger than any tool file a help yields (npm's, the largest measured, is about 300 KB). */
const MAX_RECORD_BYTES = 16 * 1024 * 1024;

export interface CacheKey {
  readonly format: number;
  /** @ahma/introspect's version. */
  readonly introspect: string;
  /** The tool file's name (from the program as --introspect named it). */
  readonly name: string;
  /** Levels of subcommands read. */
  readonly depth: number;
  readonly path: string;
  readonly real: string;
  readonly identity: ResolvedProgram['identity'];
}

/** What reading a program's help came to: its tool definition, or why it serves none. */
export type Outcome =
  | { readonly kind: 'tools'; readonly definition: Record<string, unknown> }
  | { readonly kind: 'refused'; readonly reason: string };

export type Lookup =
  | { readonly kind: 'miss' }
  | { readonly kind: 'hit'; readonly outcome: Outcome; readonly file: string }
  | { readonly kind: 'ignored'; readonly why: string; readonly file: string };

export function cacheKey(
  program: ResolvedProgram,
  name: string,
  depth: number,
  introspect: string,
): CacheKey {
  return {
    format: RECORD_FORMAT,
    introspect,
    name,
    depth,
    path: program.path,
    real: program.real,
    identity: program.identity,
  };
}

export class IntrospectionCache {
  readonly dir: string;
  readonly #checker = new DocumentChecker({ compileInputSchemas: true });

  private constructor(dir: string) {
    this.dir = dir;
  }

  /**
   * The cache directory `<stateRoot>/introspect`, made 0700 when missing; a problem (not a
   * directory of this user) when it cannot be trusted, and then nothing is cached.
   */
  static async open(stateRoot: string): Promise<IntrospectionCache | { readonly problem: string }> {
    const dir = join(stateRoot, 'introspect');
    try {
      await mkdir(dir, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        return { problem: `${dir} cannot be made (${String(error)})` };
      }
    }
    const info = await lstat(dir);
    if (!info.isDirectory()) return { problem: `${dir} is not a directory` };
    if (process.getuid !== undefined && info.uid !== process.getuid()) {
      return { problem: `${dir} belongs to another user (uid ${String(info.uid)})` };
    }
    // Ours, as the state root it lies in: only the access of others is wrong, and taken away.
    if ((info.mode & 0o077) !== 0) {
      const handle = await open(
        dir,
        constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW,
      );
      await handle.chmod(0o700).finally(() => handle.close());
    }
    return new IntrospectionCache(dir);
  }

  /** `<name>-<path hash>-<key hash>.json`: one program's records share the first two parts. */
  fileFor(key: CacheKey): string {
    return join(this.dir, `${prefixOf(key)}${hash(JSON.stringify(key)).slice(0, 16)}.json`);
  }

  async read(key: CacheKey): Promise<Lookup> {
    const file = this.fileFor(key);
    const read = await readPrivateFile(file, MAX_RECORD_BYTES);
    if (read.kind === 'missing') return { kind: 'miss' };
    if (read.kind === 'refused') return { kind: 'ignored', why: `it ${read.why}`, file };
    const text = read.text;
    const why = this.#problem(text, key);
    if (typeof why === 'string') return { kind: 'ignored', why, file };
    return { kind: 'hit', outcome: why.outcome, file };
  }

  /** Keeps `outcome` for `key` (mode 0600), and removes the program's records of other keys. */
  async write(key: CacheKey, outcome: Outcome): Promise<string> {
    const file = this.fileFor(key);
    const record = { ahma_introspect_cache: RECORD_FORMAT, key, outcome };
    await writeFileAtomicAt(file, `${JSON.stringify(record)}\n`);
    // The new file is created 0644 inside this 0700 directory, where no one else can reach it; it
    // is made 0600 at once, through a descriptor that does not follow a link.
    const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    await handle.chmod(0o600).finally(() => handle.close());
    const prefix = prefixOf(key);
    const stale = (await readdir(this.dir)).filter(
      (name) => name.startsWith(prefix) && join(this.dir, name) !== file && !name.includes('.tmp-'),
    );
    await Promise.all(stale.map((name) => rm(join(this.dir, name), { force: true })));
    return file;
  }

  /** Why a record's text is not what `key` may serve, else the outcome it holds. */
  #problem(text: string, key: CacheKey): string | { readonly outcome: Outcome } {
    let record: unknown;
    try {
      record = JSON.parse(text);
    } catch {
      return 'it is not JSON';
    }
    if (typeof record !== 'object' || record === null) return 'it is not a cache record';
    const {
      ahma_introspect_cache: format,
      key: written,
      outcome,
    } = record as Record<string, unknown>;
    if (format !== RECORD_FORMAT) return 'it is not a cache record of this version';
    if (!isDeepStrictEqual(written, key)) return 'it was written for another program or version';
    if (typeof outcome !== 'object' || outcome === null) return 'it holds no outcome';
    const { kind, reason, definition } = outcome as Record<string, unknown>;
    if (kind === 'refused' && typeof reason === 'string') return { outcome: { kind, reason } };
    if (kind !== 'tools' || typeof definition !== 'object' || definition === null) {
      return 'it holds no outcome';
    }
    const check = this.#checker.checkDefinition(this.dir, JSON.stringify(definition));
    if (!check.ok) {
      const first = check.diagnostics[0];
      return `its definition does not validate (${first?.pointer ?? ''}: ${first?.message ?? '?'})`;
    }
    // It must run the program it was read from, under the name it was read for.
    const runs = [check.definition.command, check.definition.availability_check?.command];
    if (check.definition.name !== key.name || runs.some((command) => command !== key.path)) {
      return `its definition does not run ${key.path} as ${key.name}`;
    }
    return { outcome: { kind: 'tools', definition: definition as Record<string, unknown> } };
  }
}

function prefixOf(key: CacheKey): string {
  return `${key.name}-${hash(key.path).slice(0, 8)}-`;
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
