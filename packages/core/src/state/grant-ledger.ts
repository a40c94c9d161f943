// The grants a person gave (R7.18): "always" answers to the server's questions, kept in Ahma's
// private state (`<root>/grants.json`), which commands can neither read nor write (the read policy
// denies the root, and the root lies outside every writable path). Each grant is one narrow rule —
// a host and port a scope's commands may reach through the egress proxy, or a directory they may
// write — with who gave it, when and why, so `ahma-shell grants list` can show it and `grants
// revoke` take it back.
//
// The file is small and rarely written: it is read whole, changed in memory, and replaced by
// renaming a fresh 0600 file over it (a reader never sees half a file). It is never followed
// through a link, and a file another user owns or others may write is refused, not trusted.
import { randomBytes } from 'node:crypto';
import { lstat, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { AhmaError } from '../errors.js';
import { readRegularFile } from '../paths/read-regular.js';
import { errorCode } from './paths.js';

export const LEDGER_FILE = 'grants.json';

const grantSchema = z.strictObject({
  id: z.string().regex(/^g-[0-9a-f]{8}$/),
  /** `host`: a host commands may reach; `write`: a path they may write. */
  kind: z.enum(['host', 'write']),
  /** A host rule in its canonical text (`static.crates.io:443`), or an absolute real path. */
  rule: z.string().min(1),
  /** The real path of the scope whose commands it is for. */
  scope: z.string().startsWith('/'),
  /** Who answered: the MCP client that asked the person (name and version). */
  who: z.string(),
  /** ISO time. */
  when: z.string(),
  /** What was refused, by which tool and operation. */
  why: z.string(),
});

const ledgerSchema = z.strictObject({
  version: z.literal(1),
  grants: z.array(grantSchema),
});

export type LedgerGrant = z.infer<typeof grantSchema>;

/** What the ledger may hold: bounded, so a runaway client cannot grow it without end. */
const MAX_GRANTS = 1000;
const MAX_BYTES = 1 << 20;

export class GrantLedger {
  readonly path: string;
  /** Changes of this process one after another (two servers at once may still race: rare). */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(stateRoot: string) {
    this.path = join(stateRoot, LEDGER_FILE);
  }

  /** Every grant, oldest first; none when there is no ledger yet. */
  async list(): Promise<LedgerGrant[]> {
    let text: string;
    try {
      await this.#checkOwner();
      text = await readRegularFile(this.path, MAX_BYTES);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return [];
      throw new AhmaError('CONFIG_INVALID', `the grant ledger ${this.path}: ${describe(error)}`);
    }
    const parsed = ledgerSchema.safeParse(safeJson(text));
    if (!parsed.success) {
      throw new AhmaError(
        'CONFIG_INVALID',
        `the grant ledger ${this.path} is malformed (${parsed.error.issues[0]?.message ?? 'not JSON'}); move it away to start afresh`,
      );
    }
    return parsed.data.grants;
  }

  /** The grants of one kind for one scope's commands. */
  async forScope(scope: string, kind: LedgerGrant['kind']): Promise<LedgerGrant[]> {
    return (await this.list()).filter((grant) => grant.scope === scope && grant.kind === kind);
  }

  /** Records a grant (an equal rule for the scope is not recorded twice); returns it. */
  add(grant: Omit<LedgerGrant, 'id'>): Promise<LedgerGrant> {
    return this.#serial(() => this.#add(grant));
  }

  /** Removes grants by id; returns those removed. */
  revoke(ids: readonly string[]): Promise<LedgerGrant[]> {
    return this.#serial(async () => {
      const grants = await this.list();
      const removed = grants.filter((grant) => ids.includes(grant.id));
      if (removed.length > 0) await this.#write(grants.filter((each) => !ids.includes(each.id)));
      return removed;
    });
  }

  #serial<T>(change: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(change, change);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #add(grant: Omit<LedgerGrant, 'id'>): Promise<LedgerGrant> {
    const grants = await this.list();
    const same = grants.find(
      (each) => each.kind === grant.kind && each.rule === grant.rule && each.scope === grant.scope,
    );
    if (same !== undefined) return same;
    if (grants.length >= MAX_GRANTS) {
      throw new AhmaError(
        'CONFIG_INVALID',
        `the grant ledger holds ${String(MAX_GRANTS)} grants already; revoke some (ahma-shell grants revoke)`,
      );
    }
    const added = { id: `g-${randomBytes(4).toString('hex')}`, ...grant };
    await this.#write([...grants, added]);
    return added;
  }

  async #write(grants: readonly LedgerGrant[]): Promise<void> {
    const fresh = `${this.path}.${randomBytes(6).toString('hex')}.tmp`;
    const text = `${JSON.stringify({ version: 1, grants }, undefined, 2)}\n`;
    try {
      await writeFile(fresh, text, { mode: 0o600, flag: 'wx' });
      await rename(fresh, this.path);
    } catch (error) {
      await rm(fresh, { force: true });
      throw error;
    }
  }

  /** A ledger of another user's, or one others may write, is no ledger of ours. */
  async #checkOwner(): Promise<void> {
    const info = await lstat(this.path);
    const uid = process.getuid?.();
    if (!info.isFile()) throw new Error('it is not a regular file');
    if (uid !== undefined && info.uid !== uid) {
      throw new Error(`it belongs to uid ${String(info.uid)}, not to this user`);
    }
    if ((info.mode & 0o022) !== 0) throw new Error('others may write it');
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
