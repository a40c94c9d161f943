// The handshake of an isolated session and the lock of its scope (R8D.7–R8D.9, R8D.14): which
// phase the session is in, and what the client has told it that a new process must be told again.
// The rule: no process runs before the scope is locked (initialize and ping are answered by the
// session), and the scope, once locked, never changes (R8D.8). Pure state: the session
// (isolated-session.ts) asks it what each message means and does the sending.
//
//   init ──initialize──▶ initializing ──answer──▶ roots ──scope settled──▶ starting ──▶ ready
//     ▲                       │ (an error answer: back to init)     │            ▲  │
//     └───────────────────────┘                                    │   (crash)  └──┘
//   any phase ──roots changed after the lock, an unusable root, the process dying twice──▶ ended
//   any phase ──close(), or the client's transport closing──▶ ended (closed)
//
// - init: no process runs yet (ping is answered by the session; everything else is held).
// - initializing: the session answers the client's initialize as its process would
//   (isolated-session.ts, answerInitialize).
// - roots: waiting for notifications/initialized, then for roots/list (session-roots.ts), or the
//   default scope at once for a client that did not declare `roots`.
// - starting: the scope is locked, and the session's one process starts on it. It is sent the
//   replayed handshake: the client's initialize (its answer is the session's, not the client's),
//   then notifications/initialized if the client had sent it, then the client's last
//   logging/setLevel.
// - ready: messages pass both ways (message-router.ts); a crash goes back to starting.
import type { JSONRPCNotification, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';

export type Phase = 'init' | 'initializing' | 'roots' | 'starting' | 'ready' | 'ended';

/** A new process that has not answered the replayed initialize by then is taken for broken. */
export const HANDSHAKE_TIMEOUT_MS = 30_000;

export class Handshake {
  #phase: Phase = 'init';
  /** The client's initialize request (replayed to every later process). */
  #initialize: JSONRPCRequest | undefined;
  #clientInitialized = false;
  #scope: string | undefined;
  /** The replayed initialize being answered, and whether notifications/initialized follows it. */
  #replay: { readonly key: string; readonly sendInitialized: boolean } | undefined;

  get phase(): Phase {
    return this.#phase;
  }

  /** The locked scope; undefined until the roots settled it. */
  get scope(): string | undefined {
    return this.#scope;
  }

  get initialize(): JSONRPCRequest | undefined {
    return this.#initialize;
  }

  get clientInitialized(): boolean {
    return this.#clientInitialized;
  }

  /** Messages pass both ways: the process on the locked scope has its handshake. */
  get serving(): boolean {
    return this.#phase === 'ready';
  }

  get ended(): boolean {
    return this.#phase === 'ended';
  }

  /** The roots are awaited and the client can be asked: each message of its is a chance to ask. */
  get seeksRoots(): boolean {
    return this.#phase === 'roots' && this.#clientInitialized;
  }

  /** A roots outcome may still lock the scope. */
  get awaitsScope(): boolean {
    return this.#phase !== 'ended' && this.#scope === undefined;
  }

  /** Whether the client's initialize declared the roots capability. */
  get rootsDeclared(): boolean {
    const params = this.#initialize?.params as { capabilities?: { roots?: unknown } } | undefined;
    return params?.capabilities?.roots !== undefined;
  }

  /** The client's initialize: false when it sent one already (refused); else it is answered. */
  clientInitialize(request: JSONRPCRequest): boolean {
    if (this.#initialize !== undefined) return false;
    this.#initialize = request;
    this.#phase = 'initializing';
    return true;
  }

  /**
   * The client's initialize was answered: an error lets the client try again (`retry`); otherwise
   * the roots are awaited, and sought at once when the client has sent notifications/initialized
   * already (`seek_roots`), else once it does (`await_initialized`).
   */
  initializeAnswered(failed: boolean): 'retry' | 'await_initialized' | 'seek_roots' {
    if (failed) {
      this.#initialize = undefined;
      this.#phase = 'init';
      return 'retry';
    }
    this.#phase = 'roots';
    return this.#clientInitialized ? 'seek_roots' : 'await_initialized';
  }

  /**
   * notifications/initialized from the client: `remembered` before the initialize answer (the
   * process gets it with the handshake), `seek_roots` while the roots are awaited, `pass_on` once
   * the scope is locked (it goes to the process in order).
   */
  clientSentInitialized(): 'remembered' | 'seek_roots' | 'pass_on' {
    this.#clientInitialized = true;
    if (this.#phase === 'init' || this.#phase === 'initializing') return 'remembered';
    if (this.#phase === 'roots') return 'seek_roots';
    return 'pass_on';
  }

  /**
   * notifications/roots/list_changed: after the lock the session ends (`end`, with the scope it had,
   * R8D.12); before, the roots are asked again if they are awaited (`ask_again`). It never reaches
   * a process.
   */
  rootsChanged():
    | { readonly kind: 'end'; readonly scope: string }
    | { readonly kind: 'ask_again' }
    | { readonly kind: 'ignore' } {
    if (this.#scope !== undefined) return { kind: 'end', scope: this.#scope };
    return { kind: this.seeksRoots ? 'ask_again' : 'ignore' };
  }

  /** The roots settled the scope (call only while awaitsScope): locked for the session's life. */
  lock(scope: string): void {
    this.#scope = scope;
    this.#phase = 'starting';
  }

  /**
   * A process on the locked scope is sent the client's initialize under the session's own id
   * (`key`); notifications/initialized follows the answer if the client has sent it by now.
   */
  replayStarted(key: string): void {
    this.#replay = { key, sendInitialized: this.#clientInitialized };
  }

  /** Whether `key` answers the replayed initialize; if so the replay is over. */
  replayAnswered(key: string): { readonly sendInitialized: boolean } | undefined {
    const replay = this.#replay;
    if (replay?.key !== key) return undefined;
    this.#replay = undefined;
    return replay;
  }

  /** The process being handed the replay is gone (stopped): its answer is no one's. */
  replayAbandoned(): void {
    this.#replay = undefined;
  }

  /** The process on the locked scope has its handshake: from now on messages pass. */
  serve(): void {
    this.#phase = 'ready';
  }

  /** The locked process died: another is started on the same scope (restart-policy.ts). */
  restart(): void {
    this.#phase = 'starting';
  }

  /** Ends the session (by itself or by close()); returns the phase it ended in. */
  end(): Phase {
    const was = this.#phase;
    this.#phase = 'ended';
    return was;
  }
}

/** The client's initialize as a new process is sent it: its params under the session's own id. */
export function replayedInitialize(id: string, initialize: JSONRPCRequest): JSONRPCRequest {
  return { jsonrpc: '2.0', id, method: 'initialize', params: initialize.params };
}

export function initializedNotification(): JSONRPCNotification {
  return { jsonrpc: '2.0', method: 'notifications/initialized' };
}
