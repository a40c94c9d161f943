// Workspace lanes (upstream ahma's `concurrency`): two agent calls that write one workspace — two
// `npm install`s, `cargo build` beside `cargo test` — would race on its files. A call runs in one
// of three lanes:
//   exclusive — the workspace's writers take turns, first come first served, each holding it until
//               its whole process tree has exited;
//   read_only — runs at once, beside the writer, with no write access to the scope (the sandbox
//               enforces it: a tool wrongly declared read-only fails instead of racing);
//   service   — runs at once beside both (dev servers, log followers).
// Only the exclusive lane needs bookkeeping, kept here per workspace; the other two are a matter
// of how the command is confined (the caller's part).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const LANES = ['exclusive', 'read_only', 'service'] as const;
export type Lane = (typeof LANES)[number];

/** Where a waiting call stands. */
export interface LanePlace {
  /** The workspace's key: its git top-level, else the sandbox scope. */
  readonly workspace: string;
  /** The operation it waits for: the holder when it is first in line, else the one before it. */
  readonly behind: string;
  /** 1 for the first in line. */
  readonly position: number;
}

/** One exclusive call's turn at a workspace. */
export interface LaneTicket {
  /** Undefined: it holds the workspace now. */
  readonly place: LanePlace | undefined;
  /** Resolves when the workspace is this call's, or when its signal aborts while it waits. */
  readonly turn: Promise<void>;
  /** Hands the workspace to the next in line (once its process tree has exited); idempotent. */
  release(): void;
}

/** A workspace's holder and who waits behind it, first in line first. */
export interface WorkspaceQueue {
  readonly workspace: string;
  readonly holder: string;
  readonly waiting: readonly string[];
}

interface Waiter {
  readonly id: string;
  readonly fingerprint: string;
  readonly grant: () => void;
}

interface Workspace {
  holder: string;
  readonly waiting: Waiter[];
}

/** How many working directories' workspaces are remembered (each is a walk up to the root). */
const REMEMBERED_DIRECTORIES = 256;

export class WorkspaceLanes {
  readonly #scope: string;
  readonly #workspaces = new Map<string, Workspace>();
  readonly #workspaceOfDirectory = new Map<string, string>();

  constructor(scope: string) {
    this.#scope = scope;
  }

  /**
   * The workspace a command in `cwd` writes: the nearest directory above it holding `.git` (a
   * repository's top level, or a worktree's), else the sandbox scope.
   */
  workspaceOf(cwd: string): string {
    const known = this.#workspaceOfDirectory.get(cwd);
    if (known !== undefined) return known;
    let workspace = this.#scope;
    for (let dir = cwd; ; dir = dirname(dir)) {
      if (existsSync(join(dir, '.git'))) {
        workspace = dir;
        break;
      }
      if (dirname(dir) === dir) break;
    }
    if (this.#workspaceOfDirectory.size >= REMEMBERED_DIRECTORIES) {
      this.#workspaceOfDirectory.clear();
    }
    this.#workspaceOfDirectory.set(cwd, workspace);
    return workspace;
  }

  /**
   * Takes operation `id`'s place in the workspace's line: the workspace at once when nobody holds
   * it, else last in line. `fingerprint` names what it runs (waitingWith).
   */
  enter(workspace: string, id: string, fingerprint: string, signal: AbortSignal): LaneTicket {
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.#leave(workspace, id);
    };
    const current = this.#workspaces.get(workspace);
    if (current === undefined) {
      this.#workspaces.set(workspace, { holder: id, waiting: [] });
      return { place: undefined, turn: Promise.resolve(), release };
    }
    let resolveTurn: () => void = () => undefined;
    const turn = new Promise<void>((resolve) => (resolveTurn = resolve));
    let granted = false;
    const waiter: Waiter = {
      id,
      fingerprint,
      grant: () => {
        granted = true;
        resolveTurn();
      },
    };
    const place: LanePlace = {
      workspace,
      behind: current.waiting.at(-1)?.id ?? current.holder,
      position: current.waiting.length + 1,
    };
    current.waiting.push(waiter);
    // Cancelled while waiting: out of the line, and on to its (cancelled) end at once.
    const onAbort = () => {
      if (granted) return; // it holds the workspace: release() hands it on when it has ended
      const index = current.waiting.indexOf(waiter);
      if (index >= 0) current.waiting.splice(index, 1);
      released = true;
      resolveTurn();
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    void turn.then(() => signal.removeEventListener('abort', onAbort));
    return { place, turn, release };
  }

  /**
   * A call still waiting in the workspace's line that runs the same thing: sent again, it is the
   * same call (it will run after everything before it anyway), so it must not run twice.
   */
  waitingWith(workspace: string, fingerprint: string): string | undefined {
    return this.#workspaces
      .get(workspace)
      ?.waiting.find((waiter) => waiter.fingerprint === fingerprint)?.id;
  }

  /** Where operation `id` waits now, undefined when it does not (any more). */
  placeOf(id: string): LanePlace | undefined {
    for (const [workspace, { holder, waiting }] of this.#workspaces) {
      const index = waiting.findIndex((waiter) => waiter.id === id);
      if (index >= 0) {
        const behind = index === 0 ? holder : (waiting[index - 1]?.id ?? holder);
        return { workspace, behind, position: index + 1 };
      }
    }
    return undefined;
  }

  /** Every workspace held now, with its line. */
  queues(): WorkspaceQueue[] {
    return [...this.#workspaces].map(([workspace, { holder, waiting }]) => ({
      workspace,
      holder,
      waiting: waiting.map((waiter) => waiter.id),
    }));
  }

  #leave(workspace: string, id: string): void {
    const current = this.#workspaces.get(workspace);
    if (current?.holder !== id) return;
    const next = current.waiting.shift();
    if (next === undefined) {
      this.#workspaces.delete(workspace);
      return;
    }
    current.holder = next.id;
    next.grant();
  }
}
