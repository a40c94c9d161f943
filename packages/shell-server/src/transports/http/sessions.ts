// The live MCP sessions of the HTTP server (R8.4), Streamable and legacy alike, by id. Clients
// often go without DELETE (a closed laptop, the conformance suite), so abandoned sessions must not
// pile up:
// - an idle session is ended after `idleTimeoutMs`; idle means no HTTP exchange of it is open (an
//   SDK client keeps its GET stream open, so a connected one never is) and no command it started
//   still runs;
// - at most `maxSessions` live at once: a new one first ends the longest-idle one, and is refused
//   (503) only when none is idle.
// Sessions are logged by a number, never by their id: the id is all a client needs to act in a
// session, so it stays out of the log.
import type { Logger } from 'pino';

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
  lastActive: number;
  /** HTTP exchanges of the session still open (an SSE stream stays open). */
  open: number;
}

export interface SessionLimits {
  readonly idleTimeoutMs: number;
  readonly maxSessions: number;
}

/** Half an hour without a request is an abandoned session; a hundred is more than a desk needs. */
export const DEFAULT_SESSION_LIMITS: SessionLimits = {
  idleTimeoutMs: 30 * 60 * 1000,
  maxSessions: 100,
};

export class SessionTable {
  readonly #limits: SessionLimits;
  readonly #logger: Logger;
  readonly #byId = new Map<string, SessionEntry>();
  readonly #bySession = new Map<LiveSession, SessionEntry>();
  /** Sessions being opened (their initialize not answered yet): they hold a place. */
  #opening = 0;
  #labels = 0;
  readonly #sweeper: NodeJS.Timeout;

  constructor(limits: SessionLimits, logger: Logger) {
    this.#limits = limits;
    this.#logger = logger;
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

  /**
   * Reserves a place for a session about to open, ending the longest-idle session when the table
   * is full; false when every session is busy. Give the place back with `opened`.
   */
  async reserve(): Promise<boolean> {
    if (this.#byId.size + this.#opening >= this.#limits.maxSessions) {
      const idle = [...this.#byId.values()]
        .filter((entry) => this.#isIdle(entry))
        .sort((a, b) => a.lastActive - b.lastActive)[0];
      if (idle === undefined) return false;
      this.#logger.info({ session: idle.label }, 'session ended to make room for a new one');
      this.#forget(idle);
      await idle.session.close();
    }
    this.#opening++;
    return true;
  }

  /** The reserved place is taken by `session` (or given back when undefined: it never opened). */
  opened(kind: SessionKind, session: LiveSession | undefined): void {
    this.#opening = Math.max(0, this.#opening - 1);
    if (session === undefined || session.id === undefined) return;
    const entry: SessionEntry = {
      kind,
      session,
      label: ++this.#labels,
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

  #isIdle(entry: SessionEntry): boolean {
    return entry.open === 0 && entry.session.runningOperations() === 0;
  }

  #forget(entry: SessionEntry): void {
    if (entry.session.id !== undefined) this.#byId.delete(entry.session.id);
    this.#bySession.delete(entry.session);
  }
}
