// The command registry (SPEC §8): the registered commands, persisted after every change. Changes
// run one at a time, in this process through a queue and across processes sharing the file through
// a lock file, each on the file's latest content, so concurrent changes are all kept (EC1). A change
// is on disk (atomically, FR5/NFR2) before anyone sees it; one that fails leaves the registry as it
// was.
import { readFile, stat } from 'node:fs/promises';
import { AhmaError } from '../errors.js';
import type { RegisteredCommand } from './command.js';
import { RegistryDraft, type DraftRules } from './draft.js';
import { withFileLock } from './file-lock.js';
import {
  parseRegistryText,
  readRegistryFile,
  renderRegistryFile,
  type RegistryEntry,
} from './registry-file.js';
import { removeStaleTemporaries, writeFileAtomic } from './write-atomic.js';

export interface RegistryOptions extends DraftRules {
  /** The registry file (default `<scope>/.ahma/registry.json`). */
  readonly file: string;
}

/** What the registry had to do to its file on load; reported in the log, list_commands and help. */
export interface RegistryNotice {
  readonly problem: string;
  readonly backup: string;
}

/** Identity of the file's content as last read or written: another writer changes it. */
type FileIdentity = string | undefined;

export class Registry {
  readonly #options: RegistryOptions;
  #entries: ReadonlyMap<string, RegistryEntry> = new Map();
  #seen: FileIdentity;
  #notices: RegistryNotice[] = [];
  #queue: Promise<unknown> = Promise.resolve();
  readonly #listeners = new Set<() => void>();

  private constructor(options: RegistryOptions) {
    this.#options = options;
  }

  /** Loads the file: missing means empty; corrupt is moved aside and noted (EC4). */
  static async open(options: RegistryOptions): Promise<Registry> {
    const registry = new Registry(options);
    await removeStaleTemporaries(options.file);
    // A corrupt file is moved aside under the lock, as a change does: another process may be
    // moving it aside too, or have replaced it with a good file already (EC1, EC4).
    if (await isCorrupt(options.file)) await withFileLock(options.file, () => registry.#reload());
    else await registry.#reload();
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
    const next = this.#queue.then(() =>
      withFileLock(this.#options.file, async () => {
        const reloaded = (await identityOf(this.#options.file)) !== this.#seen;
        if (reloaded) await this.#reload();
        try {
          const draft = new RegistryDraft(this.#entries, this.#options);
          const result = await work(draft);
          if (draft.changed) {
            await this.#write(draft.entries);
            this.#entries = draft.entries;
            this.#emit();
          }
          return result;
        } finally {
          if (reloaded) this.#emit();
        }
      }),
    );
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #reload(): Promise<void> {
    const read = await readRegistryFile(this.#options.file);
    if (read.kind === 'corrupt') {
      this.#notices = [...this.#notices, { problem: read.problem, backup: read.backup }];
      this.#entries = new Map();
    } else {
      this.#entries = read.entries;
    }
    this.#seen = await identityOf(this.#options.file);
  }

  async #write(entries: ReadonlyMap<string, RegistryEntry>): Promise<void> {
    try {
      await writeFileAtomic(this.#options.file, renderRegistryFile(entries));
    } catch (error) {
      throw new AhmaError(
        'REGISTRY_WRITE_FAILED',
        `the change was not made: writing ${this.#options.file} failed: ${(error as Error).message}`,
        { cause: error },
      );
    }
    this.#seen = await identityOf(this.#options.file);
  }

  #emit(): void {
    for (const listener of this.#listeners) listener();
  }
}

/** Whether the file exists and is no registry file (a read error is left to the reload). */
async function isCorrupt(file: string): Promise<boolean> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  return text !== undefined && typeof parseRegistryText(text) === 'string';
}

/** Device, inode, size and change time: a rename-over or an edit in place changes one of them. */
async function identityOf(file: string): Promise<FileIdentity> {
  const info = await stat(file, { bigint: true }).catch(() => undefined);
  if (info === undefined) return undefined;
  return `${String(info.dev)}:${String(info.ino)}:${String(info.size)}:${String(info.ctimeNs)}`;
}
