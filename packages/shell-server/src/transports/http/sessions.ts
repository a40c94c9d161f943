// The live MCP sessions of the HTTP server (R8.4), Streamable and legacy alike, by id. Clients
// often go without DELETE (a closed laptop, the conformance suite), so abandoned sessions must not
// pile up; and any local process can open sessions, so one must not be able to end another's
// session, nor make the server start processes without bound:
// - an idle session is ended after `idleTimeoutMs`; idle means no HTTP exchange of it is open (an
//   SDK client keeps its GET stream open, so a connected one never is) and no command it started
//   still runs (with --session-isolation too: transports/http/session/session-backend.ts counts them);
// - at most `maxSessions` live at once (--max-sessions: 100, 16 with --session-isolation). A new
//   one may end a session idle for longer than `evictableIdleMs` (5 minutes), the longest-idle
//   first, and is refused (503) when none is: a session that made any request lately is never
//   ended to make room, however many initialize requests others send;
// - a client address other than this machine's may hold at most `maxSessionsPerPeer` of them (half
//   the cap), so one remote host cannot take every place. The peers are told apart by where a
//   connection comes from: a remote address, `loopback` for every local TCP client (all local
//   processes look alike over TCP) and `unix` for the unix socket (--http-socket, the server's own
//   uid). This machine's two are not capped below the cap: on the default bind they are the only
//   peers there are, and capping them would only shrink the cap;
// - with --session-isolation every session is a process (~80 MB of Node), and together they may
//   use at most `sessionMemoryMb` (--session-memory-mb, 2048): before a session opens, the resident
//   memory (VmRSS) of every session process is summed, with an estimate for the new one (the mean
//   of the live ones, 80 MiB while there are none) and for those still starting; a session that
//   would go over the budget ends idle sessions as above, or is refused. Only the session's own
//   process counts, not the commands below it: they are the client's work, bounded by nothing a
//   session limit could know (a build may take gigabytes for a minute), and counting them would
//   refuse sessions because of a command of another one. The budget is of the cost the server
//   takes on by opening a session.
// Every refusal is a 503 with Retry-After whose message names the limit, and is logged.
// Sessions are logged by a number, never by their id: the id is all a client needs to act in a
// session, so it stays out of the log.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import type { SessionProcess } from './session/session-backend.js';
import { RpcCode } from '../../jsonrpc/codes.js';
import { refusal, type HttpRefusal } from '../../jsonrpc/refusal.js';
import {
  DEFAULT_MAX_ISOLATED_SESSIONS,
  DEFAULT_MAX_SESSIONS,
  type ServerOptions,
} from '../../runtime/settings.js';

/** What the table needs of a session, whatever its transport. */
export interface LiveSession {
  readonly id: string | undefined;
  runningOperations(): number;
  close(): Promise<void>;
}

export type SessionKind = 'streamable' | 'legacy';

export interface SessionEntry<S extends LiveSession = LiveSession> {
  readonly kind: SessionKind;
  readonly session: S;
  /** The session's number in the log. */
  readonly label: number;
  /** Who opened it (peerKey). */
  readonly peer: string;
  lastActive: number;
  /** HTTP exchanges of the session still open (an SSE stream stays open). */
  open: number;
}

export interface SessionLimits {
  readonly idleTimeoutMs: number;
  /** Sessions open at once, whoever opened them. */
  readonly maxSessions: number;
  /** Of those, the most one remote peer may hold (default: half the cap, at least 1). */
  readonly maxSessionsPerPeer?: number | undefined;
  /** A session idle for less than this is never ended to make room (default: 5 minutes). */
  readonly evictableIdleMs?: number | undefined;
  /** --session-isolation: MiB the session processes may use together; undefined = no budget. */
  readonly sessionMemoryMb?: number | undefined;
}

/** Half an hour without a request is an abandoned session; a hundred is more than a desk needs. */
export const DEFAULT_SESSION_LIMITS: SessionLimits = {
  idleTimeoutMs: 30 * 60 * 1000,
  maxSessions: DEFAULT_MAX_SESSIONS,
};

/** A session that made a request less than this ago is never ended to make room for another. */
export const DEFAULT_EVICTABLE_IDLE_MS = 5 * 60 * 1000;

/** What a session process is taken to need before any is measured: Node with the server loaded. */
export const SESSION_PROCESS_ESTIMATE_BYTES = 80 * 1024 * 1024;

/** How long a refused client is told to wait: about the time idle sessions take to free a place. */
const RETRY_AFTER_SECONDS = 60;

/** The peers of this machine, which only the global cap limits. */
export const LOOPBACK_PEER = 'loopback';
export const UNIX_PEER = 'unix';

/** The session limits of the command line. */
export function sessionLimitsOf(options: ServerOptions): SessionLimits {
  return {
    idleTimeoutMs: DEFAULT_SESSION_LIMITS.idleTimeoutMs,
    maxSessions:
      options.maxSessions ??
      (options.sessionIsolation ? DEFAULT_MAX_ISOLATED_SESSIONS : DEFAULT_MAX_SESSIONS),
    sessionMemoryMb: options.sessionIsolation ? options.sessionMemoryMb : undefined,
  };
}

/**
 * Who a connection is, for the per-peer cap: `unix` for the unix socket's (checked to be the
 * server's uid), `loopback` for any local TCP client, else its remote address.
 */
export function peerKey(remoteAddress: string | undefined, unixSocket: boolean): string {
  if (unixSocket) return UNIX_PEER;
  if (remoteAddress === undefined) return 'unknown';
  const address = remoteAddress.toLowerCase().replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  if ((isIP(address) === 4 && address.startsWith('127.')) || address === '::1') {
    return LOOPBACK_PEER;
  }
  return address;
}

export interface SessionTableOptions {
  /** The isolated sessions' processes, live or starting (for the memory budget). */
  readonly processes?: (() => readonly SessionProcess[]) | undefined;
  /** A process's resident memory in bytes (default: VmRSS of /proc/<pid>/status). */
  readonly residentBytes?: ((pid: number) => number | undefined) | undefined;
}

/** The limits a session is refused by: its refusal's `rule`. */
export type SessionLimit = 'max-sessions' | 'per-peer' | 'memory';

/** The resident memory of a process in bytes, from /proc; undefined where it cannot be read. */
export function residentBytesOf(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(
      readFileSync(`/proc/${String(pid)}/status`, 'utf8'),
    );
    return match?.[1] === undefined ? undefined : Number(match[1]) * 1024;
  } catch {
    return undefined;
  }
}

const MIB = 1024 * 1024;
const mib = (bytes: number) => Math.round(bytes / MIB);

export class SessionTable {
  readonly #limits: SessionLimits;
  readonly #logger: Logger;
  readonly #processes: () => readonly SessionProcess[];
  readonly #residentBytes: (pid: number) => number | undefined;
  readonly #byId = new Map<string, SessionEntry>();
  readonly #bySession = new Map<LiveSession, SessionEntry>();
  /** Sessions being opened (their initialize not answered yet) hold a place, by peer. */
  readonly #opening = new Map<string, number>();
  #openingTotal = 0;
  #labels = 0;
  readonly #sweeper: NodeJS.Timeout;

  constructor(limits: SessionLimits, logger: Logger, options: SessionTableOptions = {}) {
    this.#limits = limits;
    this.#logger = logger;
    this.#processes = options.processes ?? (() => []);
    this.#residentBytes = options.residentBytes ?? residentBytesOf;
    const every = Math.max(50, Math.min(60_000, Math.floor(limits.idleTimeoutMs / 4)));
    this.#sweeper = setInterval(() => this.sweep(), every);
    this.#sweeper.unref();
  }

  get size(): number {
    return this.#byId.size;
  }

  get(id: string): SessionEntry | undefined {
    return this.#byId.get(id);
  }

  /** The most one remote peer may hold: half the places, so others always find some. */
  get maxSessionsPerPeer(): number {
    return this.#limits.maxSessionsPerPeer ?? Math.max(1, Math.floor(this.#limits.maxSessions / 2));
  }

  /**
   * Reserves a place for a session `peer` is about to open, ending sessions idle for long enough
   * when a limit is reached; the refusal when none may end. Give the place back with `opened`.
   */
  async reserve(peer: string): Promise<HttpRefusal | undefined> {
    const plan = this.#plan(peer);
    if (!Array.isArray(plan)) {
      this.#logger.warn(
        { limit: plan.rule, peer, sessions: this.#byId.size, opening: this.#openingTotal },
        `session refused: ${plan.message}`,
      );
      return plan;
    }
    // The place is taken before the evicted sessions are closed: a reservation meanwhile counts it.
    this.#openingTotal++;
    this.#opening.set(peer, (this.#opening.get(peer) ?? 0) + 1);
    for (const entry of plan) {
      this.#logger.info({ session: entry.label }, 'session ended to make room for a new one');
      this.#forget(entry);
    }
    await Promise.all(plan.map((entry) => entry.session.close()));
    return undefined;
  }

  /**
   * The reserved place of `peer` is taken by `session` (or given back when undefined: it never
   * opened).
   */
  opened(kind: SessionKind, session: LiveSession | undefined, peer: string): void {
    this.#openingTotal = Math.max(0, this.#openingTotal - 1);
    const opening = (this.#opening.get(peer) ?? 0) - 1;
    if (opening > 0) this.#opening.set(peer, opening);
    else this.#opening.delete(peer);
    if (session === undefined || session.id === undefined) return;
    const entry: SessionEntry = {
      kind,
      session,
      label: ++this.#labels,
      peer,
      lastActive: Date.now(),
      open: 0,
    };
    this.#byId.set(session.id, entry);
    this.#bySession.set(session, entry);
    this.#logger.info({ session: entry.label, transport: kind }, 'session opened');
  }

  /** The session ended (DELETE, its client left, closed by us): its id is unknown from now on. */
  closed(session: LiveSession): void {
    const entry = this.#bySession.get(session);
    if (entry === undefined) return;
    this.#forget(entry);
    this.#logger.info({ session: entry.label }, 'session closed');
  }

  /** An HTTP exchange of `session` starts; call the returned function when it has ended. */
  begin(session: LiveSession): () => void {
    const entry = this.#bySession.get(session);
    if (entry === undefined) return () => undefined;
    entry.open++;
    entry.lastActive = Date.now();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      entry.open--;
      entry.lastActive = Date.now();
    };
  }

  /** Ends the sessions idle for longer than the timeout. */
  sweep(): void {
    const now = Date.now();
    for (const entry of [...this.#byId.values()]) {
      if (!this.#isIdle(entry) || now - entry.lastActive < this.#limits.idleTimeoutMs) continue;
      this.#logger.info({ session: entry.label }, 'idle session ended');
      this.#forget(entry);
      void entry.session.close();
    }
  }

  /** Ends every session (their running commands are killed) and stops the sweeper. */
  async closeAll(): Promise<void> {
    clearInterval(this.#sweeper);
    const entries = [...this.#byId.values()];
    for (const entry of entries) this.#forget(entry);
    await Promise.all(entries.map((entry) => entry.session.close()));
  }

  /**
   * The sessions to end so that one more of `peer` fits every limit, or why it cannot. Only
   * sessions idle for `evictableIdleMs` may end, the longest-idle first; nothing ends when the
   * session is refused anyway.
   */
  #plan(peer: string): SessionEntry[] | HttpRefusal {
    const now = Date.now();
    const graceMs = this.#limits.evictableIdleMs ?? DEFAULT_EVICTABLE_IDLE_MS;
    const evictable = [...this.#byId.values()]
      .filter((entry) => now - entry.lastActive >= graceMs && this.#isIdle(entry))
      .sort((a, b) => a.lastActive - b.lastActive);
    const evict: SessionEntry[] = [];
    const take = (candidates: readonly SessionEntry[]): SessionEntry | undefined => {
      const entry = candidates.find((candidate) => !evict.includes(candidate));
      if (entry !== undefined) evict.push(entry);
      return entry;
    };
    const graceText = `none has been idle for ${formatDuration(graceMs)}`;

    if (peer !== LOOPBACK_PEER && peer !== UNIX_PEER) {
      const perPeer = this.maxSessionsPerPeer;
      let held = this.#opening.get(peer) ?? 0;
      for (const entry of this.#byId.values()) if (entry.peer === peer) held++;
      if (held >= perPeer && take(evictable.filter((entry) => entry.peer === peer)) === undefined) {
        return limitReached(
          'per-peer',
          `Too many open sessions from one client address: at most ${String(perPeer)} of the server's ${String(this.#limits.maxSessions)} sessions per address (--max-sessions), and ${graceText}; end one (DELETE) or try again later`,
        );
      }
    }

    const { maxSessions } = this.#limits;
    if (
      this.#byId.size + this.#openingTotal - evict.length >= maxSessions &&
      take(evictable) === undefined
    ) {
      return limitReached(
        'max-sessions',
        `Too many open sessions: the server's limit of ${String(maxSessions)} (--max-sessions) is reached and ${graceText}; try again later`,
      );
    }

    const budgetMb = this.#limits.sessionMemoryMb;
    if (budgetMb !== undefined) {
      const memory = this.#memory();
      const budget = budgetMb * MIB;
      let needed = memory.used + memory.estimate;
      for (const entry of evict) needed -= memory.of(entry);
      while (needed > budget) {
        const entry = take(evictable);
        if (entry === undefined) {
          return limitReached(
            'memory',
            `Not enough memory for another session process: the session processes use ${String(mib(memory.used))} MiB of the ${String(budgetMb)} MiB budget (--session-memory-mb) and a new one needs about ${String(mib(memory.estimate))} MiB, and ${graceText}; try again later`,
          );
        }
        needed -= memory.of(entry);
      }
    }
    return evict;
  }

  /**
   * What the session processes use now (those starting, and those not measured, at the estimate),
   * the estimate of one more, and what ending a session would free.
   */
  #memory(): { used: number; estimate: number; of: (entry: SessionEntry) => number } {
    const processes = this.#processes().filter((process) => process.live);
    const sizes = processes.map((process) =>
      process.pid === undefined ? undefined : this.#residentBytes(process.pid),
    );
    const measured = sizes.filter((size): size is number => size !== undefined);
    const estimate =
      measured.length === 0
        ? SESSION_PROCESS_ESTIMATE_BYTES
        : measured.reduce((sum, size) => sum + size, 0) / measured.length;
    const bySession = new Map<string, number>();
    let used = 0;
    let starting = 0;
    processes.forEach((process, index) => {
      const size = sizes[index] ?? estimate;
      used += size;
      if (process.sessionId !== undefined && this.#byId.has(process.sessionId)) {
        bySession.set(process.sessionId, (bySession.get(process.sessionId) ?? 0) + size);
      } else {
        starting++;
      }
    });
    // Reserved places whose process has not been started yet.
    used += Math.max(0, this.#openingTotal - starting) * estimate;
    return {
      used,
      estimate,
      of: (entry) => (entry.session.id === undefined ? 0 : (bySession.get(entry.session.id) ?? 0)),
    };
  }

  #isIdle(entry: SessionEntry): boolean {
    return entry.open === 0 && entry.session.runningOperations() === 0;
  }

  #forget(entry: SessionEntry): void {
    if (entry.session.id !== undefined) this.#byId.delete(entry.session.id);
    this.#bySession.delete(entry.session);
  }
}

/** A 503 naming the limit, and when to try again. */
function limitReached(limit: SessionLimit, message: string): HttpRefusal {
  return refusal('session', message, {
    rule: limit,
    status: 503,
    rpcCode: RpcCode.Refused,
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  });
}

function formatDuration(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) {
    const minutes = ms / 60_000;
    return `${String(minutes)} minute${minutes === 1 ? '' : 's'}`;
  }
  return `${String(Math.round(ms / 100) / 10)} s`;
}
