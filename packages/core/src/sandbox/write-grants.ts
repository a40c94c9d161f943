// R7.18: writes a person allowed outside the writable paths. A command refused a write outside
// every writable path may be allowed it by the person (the MCP layer asks); the grant is the
// narrowest directory that holds the refused path — the path itself when it is an existing
// directory or file, else its parent — and never one that would reach what the sandbox protects
// for everyone: the filesystem root, HOME or a directory above it, a system directory, anything a
// deny entry covers or holds (credentials, Ahma's private state), Ahma's own code, or a directory
// holding trust hand-off files (.git, .vscode, …), which run later outside any sandbox.
//
// Granted paths reach a command as more `--rw` rules of its own helper (a warm shell carries the
// server's rules): `once` for the session's next command, `session` for its commands, `always` for
// every command of this engine and, kept in the ledger, of every later server on this scope (then
// as a writable path from the start).
import { lstatSync, readdirSync } from 'node:fs';
import { basename, dirname, sep } from 'node:path';
import handoffData from '../../policy/handoff.json' with { type: 'json' };
import { isInside, overlaps } from '../paths/inside.js';
import { realpathOrUndefined } from '../paths/real-sync.js';
import type { GrantLedger } from '../state/grant-ledger.js';
import type { LabelledPath } from '../state/paths.js';
import { checkInstallLocation } from './install-check.js';
import { deniedBy, SYSTEM_READ, type DenyEntry } from './read-policy.js';
import type { GrantDuration } from '../network/egress-gate.js';

/** The first component of every scope-relative hand-off path (.git, .ahma, .vscode, …). */
const HANDOFF_NAMES: ReadonlySet<string> = new Set(
  handoffData.scope.map((entry) => entry.path.split('/')[0] ?? entry.path),
);

export interface WriteGrantsOptions {
  /** The scope (real path): `always` grants are kept per scope. */
  readonly scope: string;
  readonly home: string | undefined;
  /** What no grant may reach: the deny entries (credentials, the private state). */
  readonly denies: readonly DenyEntry[];
  /** Ahma's own code (the server, the helper, node): no grant may make it writable (R7.6). */
  readonly code: readonly LabelledPath[];
  readonly ledger?: GrantLedger | undefined;
}

/** Where a grant for a refused write would go, or why there can be none. */
export type WriteTarget = { readonly path: string } | { readonly problem: string };

export class WriteGrants {
  readonly #options: WriteGrantsOptions;
  readonly #once = new Map<string | undefined, string[]>();
  readonly #session = new Map<string | undefined, string[]>();
  /** `always` grants given while this engine runs (those kept earlier are writable from start). */
  readonly #lasting: string[] = [];

  private constructor(options: WriteGrantsOptions) {
    this.#options = options;
  }

  /** The grants, with the scope's lasting ones from the ledger (those still grantable). */
  static async load(options: WriteGrantsOptions): Promise<WriteGrants> {
    const grants = new WriteGrants(options);
    for (const kept of (await options.ledger?.forScope(options.scope, 'write')) ?? []) {
      const real = realpathOrUndefined(kept.rule);
      if (real === kept.rule && (await grants.#problem(real)) === undefined) {
        grants.#lasting.push(real);
      }
    }
    return grants;
  }

  /** The narrowest directory (or file) to grant for a write refused at `refused` (absolute). */
  async target(refused: string): Promise<WriteTarget> {
    const real = realpathOrUndefined(refused);
    const parent = realpathOrUndefined(dirname(refused));
    const path =
      real !== undefined && isGrantable(real) ? real : parent !== undefined ? parent : undefined;
    if (path === undefined) return { problem: `${dirname(refused)} does not exist` };
    const problem = await this.#problem(path);
    return problem === undefined ? { path } : { problem };
  }

  /** The paths a command of `owner` may write beyond the server's; a `once` grant is used up. */
  forCommand(owner: string | undefined): string[] {
    const once = this.#once.get(owner) ?? [];
    this.#once.delete(owner);
    const paths = [...this.#lasting, ...(this.#session.get(owner) ?? []), ...once];
    // A granted directory removed since is no rule Landlock could take.
    return [...new Set(paths)].filter((path) => realpathOrUndefined(path) === path);
  }

  /** Records the person's grant of `path` (a target). */
  async grant(
    owner: string | undefined,
    path: string,
    duration: GrantDuration,
    record: { readonly who: string; readonly why: string },
  ): Promise<void> {
    if (duration === 'always') {
      await this.#options.ledger?.add({
        kind: 'write',
        rule: path,
        scope: this.#options.scope,
        who: record.who,
        when: new Date().toISOString(),
        why: record.why,
      });
      this.#lasting.push(path);
      return;
    }
    const map = duration === 'once' ? this.#once : this.#session;
    map.set(owner, [...(map.get(owner) ?? []), path]);
  }

  /** The session ended: its grants go. */
  forget(owner: string | undefined): void {
    this.#once.delete(owner);
    this.#session.delete(owner);
  }

  async #problem(path: string): Promise<string | undefined> {
    const { home, denies, code } = this.#options;
    if (path === sep) return 'it is the filesystem root';
    if (home !== undefined && isInside(home, path)) return 'it is HOME or holds it';
    const system = SYSTEM_READ.find((dir) => overlaps(path, dir));
    if (system !== undefined) return `it is or lies in a system directory (${system})`;
    const denied = deniedBy(denies, path);
    if (denied !== undefined) return `it lies in ${denied.path} (${denied.list}: ${denied.why})`;
    const held = denies.find((deny) => isInside(deny.path, path));
    if (held !== undefined) return `it holds ${held.path} (${held.list}: ${held.why})`;
    const handoff = handoffIn(path);
    if (handoff !== undefined) {
      return `it holds or lies in ${handoff}, whose files run later outside any sandbox`;
    }
    try {
      await checkInstallLocation(code, [{ path, label: 'the granted path' }]);
    } catch {
      return "Ahma's own code lies there";
    }
    return undefined;
  }
}

/** A path a grant may name itself: an existing directory or regular file (not a link). */
function isGrantable(path: string): boolean {
  const info = lstatSync(path, { throwIfNoEntry: false });
  return info !== undefined && (info.isDirectory() || info.isFile());
}

/** A hand-off entry `path` holds (directly) or lies in, if any. */
function handoffIn(path: string): string | undefined {
  for (let dir = path; dir !== dirname(dir); dir = dirname(dir)) {
    if (HANDOFF_NAMES.has(basename(dir))) return dir;
  }
  const info = lstatSync(path, { throwIfNoEntry: false });
  if (info?.isDirectory() !== true) return undefined;
  const names = readdirSync(path);
  const held = names.find((name) => HANDOFF_NAMES.has(name));
  return held === undefined ? undefined : `${path}/${held}`;
}
