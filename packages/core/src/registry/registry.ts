// The command registry (SPEC §8): the registered commands, persisted after every change. Changes
// run one at a time, in this process through a queue and across processes sharing the file through
// a lock file, each on the file's latest content, so concurrent changes are all kept (EC1). A change
// is on disk (atomically, FR5/NFR2) before anyone sees it; one that fails leaves the registry as it
// was. The file's directory is pinned for every access (pinned-directory.ts): commands can write
// the scope it usually lies in, and must not be able to redirect the server's writes.
import { basename, dirname, resolve } from 'node:path';
import { realpathLenient } from '../argv/paths.js';
import { isInside } from '../paths/inside.js';
import { AhmaError } from '../errors.js';
import type { RegisteredCommand } from './command.js';
import { RegistryDraft, type DraftRules } from './draft.js';
import { withFileLock } from './file-lock.js';
import { DirectoryMovedError, PinnedDirectory } from './pinned-directory.js';
import { readRegistryFile, renderRegistryFile, type RegistryEntry } from './registry-file.js';
import { removeStaleTemporaries, writeFileAtomic } from './write-atomic.js';

/** How long a starting server waits for the lock before reading the file without it. */
const OPEN_LOCK_TIMEOUT_MS = 2000;

export interface RegistryOptions extends DraftRules {
  /** The registry file (default `<scope>/.ahma/registry.json`). */
  readonly file: string;
  /** Where sandboxed commands can write (the sandbox's writable paths, the scope among them). */
  readonly writable: readonly string[];
}

/** What the registry had to do to its file on load; reported in the log, list_commands and help. */
export interface RegistryNotice {
  readonly problem: string;
  readonly backup: string;
}

export class Registry {
  readonly #options: RegistryOptions;
  /** Real path of the file's directory, fixed at open. */
  readonly #dir: string;
  readonly #name: string;
  #entries: ReadonlyMap<string, RegistryEntry> = new Map();
  /** The file's text as last read or written here (undefined: no file); another writer's differs. */
  #seen: string | undefined;
  #notices: RegistryNotice[] = [];
  #queue: Promise<unknown> = Promise.resolve();
  readonly #listeners = new Set<() => void>();

  private constructor(options: RegistryOptions, dir: string) {
    this.#options = options;
    this.#dir = dir;
    this.#name = basename(options.file);
  }

  /**
   * Loads the file: missing means empty; corrupt is moved aside and noted (EC4). A file named
   * inside the scope whose directory resolves outside it (a symlink a command planted) is
   * REGISTRY_UNSAFE: the server would write there on the command's behalf.
   */
  static async open(options: RegistryOptions): Promise<Registry> {
    const file = resolve(options.file);
    const dir = await realpathLenient(dirname(file));
    // Named where commands can write (the scope, the temp directory), it must resolve there too:
    // a symlink a command planted before the server started would send its writes elsewhere.
    const writable = await Promise.all(options.writable.map((path) => realpathLenient(path)));
    const exposed = [...options.writable, ...writable].some((w) => isInside(dirname(file), w));
    if (exposed && !writable.some((w) => isInside(dir, w))) {
      throw new AhmaError(
        'REGISTRY_UNSAFE',
        `the registry file ${file} lies where sandboxed commands can write, but its directory resolves to ${dir}, where they cannot (a symbolic link); remove the link or choose another --registry-file`,
      );
    }
    const registry = new Registry({ ...options, file }, dir);
    const pinned = await registry.#pin(false);
    if (pinned === undefined) return registry; // no directory yet: an empty registry
    try {
      await removeStaleTemporaries(pinned, registry.#name);
      // Under the lock, like a change: another process may be writing the file, or moving a
      // corrupt one aside, right now.
      // A lock that cannot be had (a directory this process may not write, a lock a command
      // planted with a live pid in it) must not keep the server from starting: read as it is.
      await withFileLock(
        pinned,
        registry.#name,
        () => registry.#reload(pinned),
        OPEN_LOCK_TIMEOUT_MS,
      ).catch(() => registry.#reload(pinned));
    } finally {
      await pinned.close();
    }
    return registry;
  }

  get file(): string {
    return this.#options.file;
  }

  /** Every entry in registration order, the rejected ones included. */
  get entries(): readonly RegistryEntry[] {
    return [...this.#entries.values()];
  }

  /** The valid commands, in registration order. */
  get commands(): readonly RegisteredCommand[] {
    return this.entries.flatMap((entry) => (entry.kind === 'command' ? [entry.command] : []));
  }

  get(name: string): RegistryEntry | undefined {
    return this.#entries.get(name);
  }

  get notices(): readonly RegistryNotice[] {
    return this.#notices;
  }

  /** Called after the entries changed (a change here, or another writer's seen at a change). */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Runs `work` on a draft of the latest entries; when it changed the draft and did not throw,
   * the draft is written to the file and becomes the registry. Resolves to what `work` returned.
   */
  change<T>(work: (draft: RegistryDraft) => Promise<T>): Promise<T> {
    const next = this.#queue.then(async () => {
      const pinned = await this.#pin(true);
      if (pinned === undefined) throw new Error('unreachable: a created directory exists');
      try {
        return await withFileLock(pinned, this.#name, async () => {
          let changed = await this.#reload(pinned, true);
          try {
            const draft = new RegistryDraft(this.#entries, this.#options);
            const result = await work(draft);
            if (draft.changed) {
              await this.#write(pinned, draft.entries);
              this.#entries = draft.entries;
              changed = true;
            }
            return result;
          } finally {
            // Once, for another writer's changes and this one's together.
            if (changed) this.#emit();
          }
        });
      } finally {
        await pinned.close();
      }
    });
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /** The file's directory, pinned; without `create` a missing one is undefined. */
  async #pin(create: boolean): Promise<PinnedDirectory | undefined> {
    try {
      return await PinnedDirectory.open(this.#dir, create);
    } catch (error) {
      if (!create && (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new AhmaError(
        'REGISTRY_WRITE_FAILED',
        error instanceof DirectoryMovedError
          ? `the registry's directory ${error.message}`
          : `the change was not made: the registry's directory ${this.#dir} cannot be used: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }

  /**
   * Loads the file; with `ifChanged`, only when its text is not what this process last read or
   * wrote. Resolves to whether the entries changed.
   */
  async #reload(pinned: PinnedDirectory, ifChanged = false): Promise<boolean> {
    const read = await readRegistryFile(
      pinned,
      this.#name,
      ifChanged ? { known: this.#seen } : {},
    ).catch((error: unknown) => {
      throw new AhmaError(
        'REGISTRY_WRITE_FAILED',
        `the registry file ${this.#options.file} cannot be read: ${(error as Error).message}`,
        { cause: error },
      );
    });
    if (read.kind === 'unchanged') return false;
    if (read.kind === 'corrupt') {
      this.#notices = [...this.#notices, { problem: read.problem, backup: read.backup }];
      this.#entries = new Map();
      this.#seen = undefined;
    } else {
      this.#entries = read.entries;
      this.#seen = read.text;
    }
    return true;
  }

  async #write(pinned: PinnedDirectory, entries: ReadonlyMap<string, RegistryEntry>) {
    const text = renderRegistryFile(entries);
    try {
      await writeFileAtomic(pinned, this.#name, text);
    } catch (error) {
      throw new AhmaError(
        'REGISTRY_WRITE_FAILED',
        `the change was not made: writing ${this.#options.file} failed: ${(error as Error).message}`,
        { cause: error },
      );
    }
    this.#seen = text;
  }

  #emit(): void {
    for (const listener of this.#listeners) listener();
  }
}
