// The full-output logs of truncated commands (SPEC §3, §4 "Resources", R7.6). Each log is a new file
// in the server's private output directory, opened with O_CREAT|O_EXCL|O_NOFOLLOW under a name with
// a random part: the server never writes through a link, nor into a file it did not just create.
// All logs together stay under a disk budget. When a log would exceed it, the logs of finished
// commands are deleted oldest first; a log that still does not fit is deleted and its result says
// so. A result therefore names a log only when it holds the whole output.
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  createWriteStream,
  lstatSync,
  openSync,
  type Stats,
  type WriteStream,
} from 'node:fs';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** 1 GiB: room for many large build logs, small next to any disk a developer works on. */
export const DEFAULT_LOG_BUDGET_BYTES = 1024 * 1024 * 1024;

/** Opening flags: a fresh file only, never a link (O_NOFOLLOW), never an existing file (O_EXCL). */
const EXCLUSIVE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** What a result says about its log, and what it says instead once the log has been deleted. */
export interface LogNotes {
  readonly marker: string;
  readonly replacement: string;
}

interface Closed {
  readonly bytes: number;
  readonly notes: LogNotes;
}

/** Deleted-for-budget notes kept for results still shown; beyond this the oldest are forgotten. */
const DELETED_NOTES_KEPT = 10_000;

export class LogStore {
  readonly dir: string;
  readonly budgetBytes: number;
  #used = 0;
  /** The part of #used that finished logs take (what deleting them all would free). */
  #closedBytes = 0;
  /** Finished logs by path, oldest first: the first to go when the budget is short. */
  readonly #closed = new Map<string, Closed>();
  /** Logs deleted for the budget, by path: results naming them are shown with the replacement. */
  readonly #deleted = new Map<string, LogNotes>();
  /** Deletions still under way (the budget counts their files as gone already). */
  readonly #deleting = new Set<Promise<void>>();

  /** The directory as it was when the store was made (undefined: it did not exist). */
  readonly #identity: Stats | undefined;

  constructor(dir: string, budgetBytes: number = DEFAULT_LOG_BUDGET_BYTES) {
    this.dir = dir;
    this.budgetBytes = Math.max(0, budgetBytes);
    this.#identity = lstatSync(dir, { throwIfNoEntry: false });
  }

  /** Bytes the logs take now (as written; the budget is enforced on this figure). */
  get usedBytes(): number {
    return this.#used;
  }

  /** The budget, for people: "1 GiB", "200 KiB". */
  describeBudget(): string {
    return formatBytes(this.budgetBytes);
  }

  /**
   * Creates a new log named after `name` with a random part. Throws (EEXIST, ELOOP, EACCES) rather
   * than ever opening something that was already there.
   */
  create(name: string): LogFile {
    // O_NOFOLLOW guards the file name only: the directory must still be the one the engine made,
    // not something put in its place (nothing but the user can write there; defence in depth).
    const now = lstatSync(this.dir, { throwIfNoEntry: false });
    const same =
      now !== undefined &&
      now.isDirectory() &&
      (this.#identity === undefined ||
        (now.dev === this.#identity.dev && now.ino === this.#identity.ino));
    if (!same) throw new Error(`the log directory ${this.dir} is missing or was replaced`);
    const safe = name.replace(/[^\w.-]/g, '_').slice(0, 100);
    const path = join(this.dir, `${safe}-${randomBytes(8).toString('hex')}.log`);
    const fd = openSync(path, EXCLUSIVE, 0o600);
    let stream: WriteStream;
    try {
      stream = createWriteStream(path, { fd });
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    return new LogFile(this, path, stream);
  }

  /**
   * Makes room for `bytes` more: deletes finished logs, oldest first, while that is not enough.
   * False when even that leaves too little (the caller drops its log).
   */
  reserve(bytes: number): boolean {
    // Deleting finished logs is pointless when even all of them would not make room.
    if (this.#used - this.#closedBytes + bytes > this.budgetBytes) return false;
    for (const [path, closed] of this.#closed) {
      if (this.#used + bytes <= this.budgetBytes) break;
      this.#closed.delete(path);
      this.#closedBytes -= closed.bytes;
      this.#used -= closed.bytes;
      this.#remember(path, closed.notes);
      this.#delete(path);
    }
    if (this.#used + bytes > this.budgetBytes) return false;
    this.#used += bytes;
    return true;
  }

  /** The log is complete: it may now be deleted to make room for newer ones. */
  closed(path: string, bytes: number, notes: LogNotes): void {
    this.#closed.set(path, { bytes, notes });
    this.#closedBytes += bytes;
  }

  /** The log was dropped before it closed (budget or write error): its bytes are free again. */
  dropped(path: string, bytes: number): void {
    this.#used -= bytes;
    this.#delete(path);
  }

  /** Deletes a log no result will show again (its operation left the history). */
  release(path: string): void {
    this.#deleted.delete(path);
    const closed = this.#closed.get(path);
    if (closed === undefined) return;
    this.#closed.delete(path);
    this.#closedBytes -= closed.bytes;
    this.#used -= closed.bytes;
    this.#delete(path);
  }

  /** What to show instead of a log's marker, when it was deleted for the budget. */
  deletedNotes(path: string): LogNotes | undefined {
    return this.#deleted.get(path);
  }

  /** Forgets every log (the engine removes the directory itself). */
  clear(): void {
    this.#closed.clear();
    this.#deleted.clear();
    this.#used = 0;
    this.#closedBytes = 0;
  }

  /** Settles once every deletion started so far is done: what the disk holds matches the count. */
  async deletionsDone(): Promise<void> {
    await Promise.all(this.#deleting);
  }

  /** Deletes a file in the background, tracked so that results can wait for it. */
  #delete(path: string): void {
    const deletion = unlink(path)
      .catch(() => undefined)
      .finally(() => this.#deleting.delete(deletion));
    this.#deleting.add(deletion);
  }

  #remember(path: string, notes: LogNotes): void {
    this.#deleted.set(path, notes);
    if (this.#deleted.size > DELETED_NOTES_KEPT) {
      const oldest = this.#deleted.keys().next();
      if (oldest.done !== true) this.#deleted.delete(oldest.value);
    }
  }
}

/** One log being written. Writes are counted against the store's budget before they are made. */
export class LogFile {
  readonly path: string;
  readonly #store: LogStore;
  readonly #stream: WriteStream;
  #bytes = 0;
  #problem: string | undefined;

  constructor(store: LogStore, path: string, stream: WriteStream) {
    this.#store = store;
    this.path = path;
    this.#stream = stream;
    stream.on('error', (error) =>
      this.#drop(`the full output could not be saved: ${error.message}`),
    );
  }

  /** Why this log holds no full output (over budget, a write error); undefined while it is whole. */
  get problem(): string | undefined {
    return this.#problem;
  }

  /** Appends a chunk; false asks the caller to wait for drained() (the file is not keeping up). */
  write(chunk: Buffer): boolean {
    if (this.#problem !== undefined) return true;
    if (!this.#store.reserve(chunk.length)) {
      this.#drop(
        `the full output was not kept: it outgrew the ${this.#store.describeBudget()} disk budget for output logs`,
      );
      return true;
    }
    this.#bytes += chunk.length;
    return this.#stream.write(chunk);
  }

  /** Resolves when the file has flushed its buffer (at once when there is none). */
  drained(): Promise<void> {
    const stream = this.#stream;
    if (!stream.writableNeedDrain || this.#problem !== undefined) return Promise.resolve();
    return new Promise((resolve) => {
      // A stream that is ending or destroyed never emits 'drain': its 'finish' or 'close' counts
      // too. Every listener goes once one fires: a long output waits here thousands of times.
      const events = ['drain', 'error', 'finish', 'close'] as const;
      const done = () => {
        for (const event of events) stream.off(event, done);
        resolve();
      };
      for (const event of events) stream.once(event, done);
    });
  }

  /** Closes the file; a whole log becomes eligible for deletion under the budget. */
  async close(notes: LogNotes): Promise<void> {
    const stream = this.#stream;
    if (!stream.destroyed) {
      await new Promise<void>((resolve) => {
        stream.end(() => resolve());
        stream.once('error', () => resolve());
        stream.once('close', () => resolve());
      });
    }
    if (this.#problem === undefined) this.#store.closed(this.path, this.#bytes, notes);
    // The result is about to say what was kept: the logs this one displaced are gone by then.
    await this.#store.deletionsDone();
  }

  /**
   * Deletes the log: no result names it (the output, cleaned, fitted its budget after all). Its
   * bytes are free again once this settles.
   */
  async discard(): Promise<void> {
    this.#drop('the log was not needed');
    await this.#store.deletionsDone();
  }

  #drop(problem: string): void {
    if (this.#problem !== undefined) return;
    this.#problem = problem;
    this.#stream.destroy();
    this.#store.dropped(this.path, this.#bytes);
    this.#bytes = 0;
  }
}

function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && value % 1024 === 0 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${String(value)} ${units[unit] ?? 'bytes'}`;
}
