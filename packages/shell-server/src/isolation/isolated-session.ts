// One session of `--session-isolation` (R8D): the session's client on one side (`upstream`, any SDK
// Transport: the HTTP session's, or an InMemoryTransport in tests), on the other its own
// `ahma-shell --mode stdio --sandbox-scope <scope>` process (R8D.3, isolation/child.ts). The scope is
// the client's first root (R8D.7), else the server's default (R8D.9), and is locked for the
// session's life (R8D.8): no command of the session ever runs in another one. Transport-agnostic,
// so the HTTP router only creates one per session and routes its requests.
//
// The state machine (`#phase`):
//
//   init ──initialize──▶ initializing ──answer──▶ roots ──scope settled──▶ starting ──▶ ready
//     ▲                       │ (an error answer: back to init)     │            ▲  │
//     └───────────────────────┘                                    │   (crash)  └──┘
//   any phase ──roots changed after the lock, an unusable root, the process dying twice──▶ ended
//   any phase ──close(), or the client's transport closing──▶ ended (closed)
//
// - init: the first process is started at once, on the DEFAULT scope, only to answer initialize:
//   it never gets another request (ping is answered here; everything else is held).
// - initializing: the client's initialize went to it; its answer goes back unchanged.
// - roots: waiting for notifications/initialized, then for roots/list (isolation/session-roots.ts: asked
//   once initialized if the client declared `roots`, asked again on each later message, since over
//   HTTP the first question may find no GET stream; bounded by `rootsTimeoutMs`, counted from the
//   initialize answer, after which the default scope is used and a warning logged). A client
//   without `roots` gets the default scope as soon as it is initialized.
// - starting: the scope is locked. If it is the first process's own scope, that process serves on
//   (it is sent notifications/initialized). Otherwise it is stopped and a new process started on
//   the locked scope (R8D.14), and the handshake replayed: the client's initialize params (the
//   answer is swallowed), notifications/initialized if the client has sent it, the last
//   logging/setLevel after a restart.
// - ready: the held messages go to the process in their order, then every message is passed on
//   both ways unchanged: requests, answers, notifications (progress, notifications/message pushes,
//   tools/list_changed), the process's requests to the client. Progress is sent as related to the
//   request that asked for it (its progressToken), so over HTTP it travels on that request's
//   stream; an answer goes where its request came from.
// - A crash (the process exiting unasked, R8.5): it is started again on the same scope and the
//   handshake replayed; the tools/call requests it was running are answered with an error (whether
//   their command ran is unknown), its other open requests are sent again. Dying again within
//   `restartWindowMs` of the last crash ends the session (`child_failed`): every open and later
//   request gets an error naming the exit.
// - notifications/roots/list_changed after the lock ends the session at once (R8D.12): the process
//   is stopped, an error logged, `onTerminated('roots_changed')` tells the HTTP layer to answer 403
//   from now on (R8D.13). Before the lock it only makes the roots be asked again.
// - An unusable first root (not a file:// URI, missing, not a directory, `/`, or one the server's
//   root policy refuses: outside --allowed-roots, a pseudo file system, temp, $HOME) ends the session
//   (`invalid_root`) like --sandbox-scope would refuse it at start: falling back to the default
//   scope would run the client's commands in a tree it did not name.
// - close() stops the process and everything under it, then closes the client's transport.
import { randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type JSONRPCResultResponse,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { ahmaShellBin } from '../package.js';
import { SessionChild, type ChildCommand, type ChildExit } from './child.js';
import type { RootPolicy } from './root-scope.js';
import { errorResponse } from '../jsonrpc/incoming.js';
import { keyOf } from '../jsonrpc/request-key.js';
import { RootsProbe, type RootsOutcome } from './session-roots.js';

export type TerminationReason = 'roots_changed' | 'child_failed' | 'invalid_root';

export interface IsolatedSessionOptions {
  /** The client's side: started here (do not start or connect it yourself). */
  readonly upstream: Transport;
  /** The server's scope: for a client without roots (R8D.9). Best given as a real path. */
  readonly defaultScope: string;
  /**
   * What a client's root is checked against (isolation/root-scope.ts); default: only the default
   * scope and what lies beneath it.
   */
  readonly roots?: RootPolicy | undefined;
  /**
   * The session's program, without `--sandbox-scope` (appended per process). Default: this
   * package's ahma-shell `--mode stdio` under the running Node; isolation/child-command.ts adds the
   * server's own flags.
   */
  readonly childCommand?: ChildCommand;
  /** The processes' environment (the server's). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger;
  /** How long to wait for the client's roots before the default scope is used. */
  readonly rootsTimeoutMs?: number;
  /** A crash within this long of the previous one ends the session instead of a restart. */
  readonly restartWindowMs?: number;
  /** How long a stopped process gets to close its runtime before its tree is killed. */
  readonly stopGraceMs?: number;
  /** Called once when the session ends by itself (not by close()). */
  readonly onTerminated?: (reason: TerminationReason) => void;
}

export interface IsolatedSession {
  /** Stops the session's process and everything under it, then closes `upstream`. Idempotent. */
  close(): Promise<void>;
  /** The locked sandbox scope; undefined until the client's roots settled it. */
  readonly scope: string | undefined;
  /** Why the session ended by itself; undefined while it serves (and after a plain close()). */
  readonly terminated: TerminationReason | undefined;
  /** The pid of the session's current process (undefined between two). */
  readonly childPid: number | undefined;
}

export const DEFAULT_ROOTS_TIMEOUT_MS = 10_000;
export const DEFAULT_RESTART_WINDOW_MS = 30_000;
export const DEFAULT_STOP_GRACE_MS = 3_000;
/** A process that has not answered the replayed initialize by then is taken for broken. */
const HANDSHAKE_TIMEOUT_MS = 30_000;

export function createIsolatedSession(options: IsolatedSessionOptions): IsolatedSession {
  const session = new Isolation(options);
  return {
    close: () => session.close(),
    get scope() {
      return session.scope;
    },
    get terminated() {
      return session.terminated;
    },
    get childPid() {
      return session.childPid;
    },
  };
}

type Phase = 'init' | 'initializing' | 'roots' | 'starting' | 'ready' | 'ended';

/** An answer to a request (an error answer without an id answers none and is not passed on). */
type Response = (JSONRPCResultResponse | JSONRPCErrorResponse) & { readonly id: RequestId };

type Classified =
  | { readonly kind: 'request'; readonly message: JSONRPCRequest }
  | { readonly kind: 'notification'; readonly message: JSONRPCNotification }
  | { readonly kind: 'response'; readonly message: Response };

/** The kind of a JSON-RPC message by its shape (the message itself is passed on untouched). */
function classify(value: unknown): Classified | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const fields = value as Record<string, unknown>;
  const hasId = typeof fields['id'] === 'string' || typeof fields['id'] === 'number';
  if (typeof fields['method'] === 'string') {
    return hasId
      ? { kind: 'request', message: value as JSONRPCRequest }
      : { kind: 'notification', message: value as JSONRPCNotification };
  }
  if (hasId && ('result' in fields || 'error' in fields)) {
    return { kind: 'response', message: value as Response };
  }
  return undefined;
}

function describeExit(exit: ChildExit, lastWords: string | undefined): string {
  const how =
    exit.error !== undefined
      ? `it could not be started: ${exit.error.message}`
      : exit.signal !== null
        ? `killed by ${exit.signal}`
        : `exit code ${String(exit.code)}`;
  return lastWords === undefined ? how : `${how}; it said: ${lastWords}`;
}

class Isolation {
  readonly #upstream: Transport;
  readonly #logger: Logger;
  readonly #options: IsolatedSessionOptions;
  readonly #defaultScope: string;
  readonly #command: ChildCommand;
  readonly #restartWindowMs: number;
  readonly #stopGraceMs: number;
  /** Prefix of the ids of the requests this session makes itself (never the client's). */
  readonly #nonce = `ahma-isolation-${randomBytes(6).toString('hex')}`;
  readonly #roots: RootsProbe;

  #phase: Phase = 'init';
  #scope: string | undefined;
  #terminated: TerminationReason | undefined;
  /** What every request gets once the session has ended by itself. */
  #endMessage = '';
  #closing: Promise<void> | undefined;
  #upstreamClosed = false;

  #child: SessionChild | undefined;
  #childScope: string | undefined;
  /** Bumped whenever the current process is replaced or stopped: older ones are not heard. */
  #generation = 0;
  readonly #stopping = new Set<Promise<void>>();
  #lastCrashAt: number | undefined;

  /** The client's initialize request (replayed to every later process). */
  #initialize: JSONRPCRequest | undefined;
  #clientInitialized = false;
  /** Client messages waiting for the session to be ready, in arrival order. */
  readonly #held: JSONRPCMessage[] = [];
  /** Client requests the current process has not answered. */
  readonly #inFlight = new Map<string, JSONRPCRequest>();
  /** Progress tokens of those requests → the request (progress goes on its stream). */
  readonly #progressTokens = new Map<string, RequestId>();
  /** Requests of the current process to the client, not answered yet. */
  readonly #childAsks = new Set<string>();
  /** The replayed initialize being answered, and whether initialized follows it. */
  #handshake: { readonly key: string; readonly sendInitialized: boolean } | undefined;
  #handshakeTimer: NodeJS.Timeout | undefined;
  /** Ids of requests this session made to the process whose answers are no one's business. */
  readonly #swallowed = new Set<string>();
  /** The last logging/setLevel params the client sent: replayed to a restarted process. */
  #logLevel: JSONRPCRequest['params'];
  #ids = 0;
  /** Sends to the client, in order. */
  #sending: Promise<void> = Promise.resolve();

  constructor(options: IsolatedSessionOptions) {
    this.#options = options;
    this.#upstream = options.upstream;
    this.#logger = options.logger;
    this.#defaultScope = realPath(options.defaultScope);
    this.#command = options.childCommand ?? {
      file: process.execPath,
      args: [ahmaShellBin(), '--mode', 'stdio'],
    };
    this.#restartWindowMs = options.restartWindowMs ?? DEFAULT_RESTART_WINDOW_MS;
    this.#stopGraceMs = options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
    this.#roots = new RootsProbe({
      idPrefix: `${this.#nonce}:roots:`,
      timeoutMs: options.rootsTimeoutMs ?? DEFAULT_ROOTS_TIMEOUT_MS,
      policy: options.roots ?? { allowed: [this.#defaultScope], forbidden: [], privatePaths: [] },
      send: (request, relatedRequestId) => this.#toClient(request, relatedRequestId),
      onSettled: (outcome) => this.#rootsSettled(outcome),
    });

    // Chained like the SDK's Protocol.connect: whoever set them before keeps being called.
    const priorClose = this.#upstream.onclose;
    this.#upstream.onclose = () => {
      this.#upstreamClosed = true;
      priorClose?.();
      void this.close();
    };
    const priorError = this.#upstream.onerror;
    this.#upstream.onerror = (error) => {
      priorError?.(error);
      this.#logger.warn({ err: error }, 'isolated session: transport error');
    };
    this.#upstream.onmessage = (message) => this.#fromClient(message);

    this.#spawn(this.#defaultScope);
    this.#upstream.start().catch((error: unknown) => {
      this.#logger.error({ err: error }, 'isolated session: the transport did not start');
      void this.close();
    });
  }

  get scope(): string | undefined {
    return this.#scope;
  }

  get terminated(): TerminationReason | undefined {
    return this.#terminated;
  }

  get childPid(): number | undefined {
    return this.#child?.pid;
  }

  close(): Promise<void> {
    return (this.#closing ??= (async () => {
      this.#phase = 'ended';
      this.#roots.cancel();
      this.#stopChild();
      await Promise.all([...this.#stopping]);
      await this.#sending;
      if (!this.#upstreamClosed) {
        this.#upstreamClosed = true;
        await this.#upstream.close().catch(() => undefined);
      }
    })());
  }

  // ── From the client ──────────────────────────────────────────────────────────────────────────

  #fromClient(value: unknown): void {
    const classified = classify(value);
    if (classified === undefined) return; // the transport checked the envelope already
    if (this.#phase === 'ended') {
      // Ended by itself: every request gets the reason. Closed: the client is going.
      if (classified.kind === 'request' && this.#closing === undefined) {
        this.#refuse(classified.message.id);
      }
      return;
    }
    switch (classified.kind) {
      case 'response':
        this.#clientAnswered(classified.message);
        return;
      case 'notification':
        this.#clientNotified(classified.message);
        return;
      case 'request':
        this.#clientAsked(classified.message);
        return;
    }
  }

  #clientAnswered(message: Response): void {
    if (this.#roots.owns(message.id)) {
      this.#roots.answer(message);
      return;
    }
    if (this.#childAsks.delete(keyOf(message.id))) {
      this.#toChild(message);
      return;
    }
    this.#logger.debug({ id: message.id }, 'isolated session: an answer no live process asked for');
  }

  #clientNotified(notification: JSONRPCNotification): void {
    switch (notification.method) {
      case 'notifications/initialized':
        this.#clientInitialized = true;
        if (this.#phase === 'init' || this.#phase === 'initializing') return; // remembered
        if (this.#phase === 'roots') {
          this.#afterInitialized();
          return;
        }
        break; // the scope was locked without waiting for it: the process gets it in order
      case 'notifications/roots/list_changed':
        if (this.#scope !== undefined) {
          this.#terminate(
            'roots_changed',
            `this session was ended: its client's roots changed after its sandbox scope was locked to ${this.#scope}, and a session's scope never changes; start a new session`,
          );
        } else if (this.#phase === 'roots' && this.#clientInitialized) {
          this.#roots.ask();
        }
        return;
      case 'notifications/cancelled': {
        const id = (notification.params as { requestId?: unknown } | undefined)?.requestId;
        if (typeof id === 'string' || typeof id === 'number') {
          const key = keyOf(id);
          const held = this.#held.findIndex(
            (message) => 'method' in message && 'id' in message && keyOf(message.id) === key,
          );
          if (held !== -1) {
            this.#held.splice(held, 1); // never sent: nothing to cancel
            return;
          }
          this.#settle(key);
        }
        break;
      }
    }
    if (this.#phase === 'roots' && this.#clientInitialized) this.#roots.ask();
    this.#forwardOrHold(notification);
  }

  #clientAsked(request: JSONRPCRequest): void {
    if (request.method === 'initialize') {
      if (this.#initialize !== undefined) {
        this.#toClient(
          errorResponse(request.id, ErrorCode.InvalidRequest, 'the session is already initialized'),
          request.id,
        );
        return;
      }
      this.#initialize = request;
      this.#phase = 'initializing';
      this.#toChild(request); // or, if the process just died, by its successor (#childExited)
      return;
    }
    if (request.method === 'ping' && this.#phase !== 'ready') {
      this.#toClient({ jsonrpc: '2.0', id: request.id, result: {} }, request.id);
      return;
    }
    if (this.#phase === 'roots' && this.#clientInitialized) this.#roots.ask(request.id);
    this.#forwardOrHold(request);
  }

  #afterInitialized(): void {
    const params = this.#initialize?.params as { capabilities?: { roots?: unknown } } | undefined;
    if (params?.capabilities?.roots === undefined) {
      this.#roots.settleDefault('the client did not declare the roots capability');
    } else {
      this.#roots.ask();
    }
  }

  #rootsSettled(outcome: RootsOutcome): void {
    if (this.#phase === 'ended' || this.#scope !== undefined) return;
    switch (outcome.kind) {
      case 'root':
        this.#lock(outcome.scope, `the client's first root ${outcome.uri}`);
        return;
      case 'default':
        this.#logger.info(
          { scope: this.#defaultScope, why: outcome.why },
          'isolated session: no usable roots, using the server scope',
        );
        this.#lock(this.#defaultScope, outcome.why);
        return;
      case 'invalid':
        this.#terminate(
          'invalid_root',
          `this session cannot start: ${outcome.message}. A session's sandbox scope is its client's first root, which must be an existing directory within the server's allowed roots`,
        );
        return;
    }
  }

  #lock(scope: string, source: string): void {
    this.#scope = scope;
    this.#phase = 'starting';
    this.#logger.info({ scope, source }, 'isolated session: sandbox scope locked');
    if (this.#child !== undefined && !this.#child.exited && this.#childScope === scope) {
      // The first process already runs on this scope and has seen nothing but initialize.
      if (this.#clientInitialized) this.#toChild(initialized());
      this.#ready();
      return;
    }
    this.#startLocked();
  }

  #forwardOrHold(message: JSONRPCMessage): void {
    if (this.#phase === 'ready' && this.#held.length === 0) this.#forward(message);
    else this.#held.push(message);
  }

  /** A client message to the ready process, with what is needed to route its answers. */
  #forward(message: JSONRPCMessage): void {
    if ('method' in message && 'id' in message) {
      const key = keyOf(message.id);
      this.#inFlight.set(key, message);
      const token = (message.params as { _meta?: { progressToken?: unknown } } | undefined)?._meta
        ?.progressToken;
      if (typeof token === 'string' || typeof token === 'number') {
        this.#progressTokens.set(keyOf(token), message.id);
      }
      if (message.method === 'logging/setLevel') this.#logLevel = message.params;
    }
    this.#toChild(message);
  }

  /** A request is answered or cancelled: its progress has nowhere to go any more. */
  #settle(key: string): void {
    const request = this.#inFlight.get(key);
    if (request === undefined) return;
    this.#inFlight.delete(key);
    for (const [token, id] of this.#progressTokens) {
      if (keyOf(id) === key) this.#progressTokens.delete(token);
    }
  }

  // ── From the process ─────────────────────────────────────────────────────────────────────────

  #fromChild(generation: number, line: string): void {
    if (generation !== this.#generation || this.#phase === 'ended') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.#logger.warn({ line: line.slice(0, 200) }, 'isolated session: a line that is not JSON');
      return;
    }
    const classified = classify(value);
    if (classified === undefined) {
      this.#logger.warn({ line: line.slice(0, 200) }, 'isolated session: not a JSON-RPC message');
      return;
    }
    switch (classified.kind) {
      case 'response':
        this.#childAnswered(classified.message);
        return;
      case 'request':
        if (this.#phase !== 'ready') {
          this.#toChild(
            errorResponse(
              classified.message.id,
              ErrorCode.InternalError,
              'the session is not ready',
            ),
          );
          return;
        }
        this.#childAsks.add(keyOf(classified.message.id));
        this.#toClient(classified.message);
        return;
      case 'notification':
        this.#childNotified(classified.message);
        return;
    }
  }

  #childAnswered(message: Response): void {
    const key = keyOf(message.id);
    if (this.#handshake?.key === key) {
      this.#handshakeAnswered(message);
      return;
    }
    if (this.#swallowed.delete(key)) {
      if ('error' in message) {
        this.#logger.warn({ error: message.error }, 'isolated session: a replayed request failed');
      }
      return;
    }
    if (
      this.#phase === 'initializing' &&
      this.#initialize !== undefined &&
      keyOf(this.#initialize.id) === key
    ) {
      this.#toClient(message, message.id);
      if ('error' in message) {
        this.#initialize = undefined;
        this.#phase = 'init';
        return;
      }
      this.#phase = 'roots';
      this.#roots.startTimer(
        `the client's roots did not arrive within ${String(this.#options.rootsTimeoutMs ?? DEFAULT_ROOTS_TIMEOUT_MS)} ms`,
      );
      if (this.#clientInitialized) this.#afterInitialized();
      return;
    }
    if (!this.#inFlight.has(key)) return; // cancelled, or not the client's
    this.#settle(key);
    this.#toClient(message, message.id);
  }

  #childNotified(notification: JSONRPCNotification): void {
    // The first process's chatter before the lock (a tools/list_changed) is of no use to anyone.
    if (this.#phase !== 'ready') return;
    if (notification.method === 'notifications/progress') {
      const token = (notification.params as { progressToken?: unknown } | undefined)?.progressToken;
      const request =
        typeof token === 'string' || typeof token === 'number'
          ? this.#progressTokens.get(keyOf(token))
          : undefined;
      // Progress of a request that is answered would only confuse the client.
      if (request !== undefined) this.#toClient(notification, request);
      return;
    }
    this.#toClient(notification);
  }

  #handshakeAnswered(message: Response): void {
    const handshake = this.#handshake;
    this.#handshake = undefined;
    clearTimeout(this.#handshakeTimer);
    if ('error' in message) {
      this.#terminate(
        'child_failed',
        `this session cannot continue: its server process refused the session's initialize (${message.error.message}); start a new session`,
      );
      return;
    }
    if (handshake?.sendInitialized === true) this.#toChild(initialized());
    if (this.#logLevel !== undefined) {
      const id = this.#newId('setLevel');
      this.#swallowed.add(keyOf(id));
      this.#toChild({ jsonrpc: '2.0', id, method: 'logging/setLevel', params: this.#logLevel });
    }
    this.#ready();
  }

  #ready(): void {
    this.#phase = 'ready';
    for (const message of this.#held.splice(0)) this.#forward(message);
  }

  // ── The process ──────────────────────────────────────────────────────────────────────────────

  #spawn(scope: string): void {
    this.#generation += 1;
    const generation = this.#generation;
    this.#childScope = scope;
    const child: SessionChild = new SessionChild({
      command: this.#command,
      scope,
      env: this.#options.env,
      onLine: (line) => this.#fromChild(generation, line),
      onStderrLine: (line) => this.#logger.info({ sessionProcess: child.pid }, line),
      onExit: (exit) => this.#childExited(generation, child, exit),
    });
    this.#child = child;
  }

  /** Replaces the process with one on the locked scope and replays the handshake (R8D.14). */
  #startLocked(): void {
    const scope = this.#scope;
    const initialize = this.#initialize;
    if (scope === undefined || initialize === undefined) return;
    this.#stopChild();
    this.#childAsks.clear();
    this.#spawn(scope);
    const id = this.#newId('initialize');
    this.#handshake = { key: keyOf(id), sendInitialized: this.#clientInitialized };
    this.#handshakeTimer = setTimeout(() => {
      this.#terminate(
        'child_failed',
        `this session cannot continue: its server process did not answer initialize within ${String(HANDSHAKE_TIMEOUT_MS / 1000)} s; start a new session`,
      );
    }, HANDSHAKE_TIMEOUT_MS);
    this.#toChild({ jsonrpc: '2.0', id, method: 'initialize', params: initialize.params });
  }

  #childExited(generation: number, child: SessionChild, exit: ChildExit): void {
    if (generation !== this.#generation || this.#phase === 'ended') return;
    this.#child = undefined;
    const what = describeExit(exit, child.lastWords());
    const now = Date.now();
    if (this.#lastCrashAt !== undefined && now - this.#lastCrashAt < this.#restartWindowMs) {
      this.#terminate(
        'child_failed',
        `the session's server process exited (${what}) again soon after a restart; this session cannot continue: start a new session`,
      );
      return;
    }
    this.#lastCrashAt = now;
    this.#logger.warn(
      { exit: what, scope: this.#childScope },
      "isolated session: the session's server process exited; restarting it",
    );
    switch (this.#phase) {
      case 'init':
        this.#spawn(this.#defaultScope);
        return;
      case 'initializing':
        this.#spawn(this.#defaultScope);
        if (this.#initialize !== undefined) this.#toChild(this.#initialize);
        return;
      case 'roots':
        return; // a process is started once the scope is locked
      case 'starting':
      case 'ready':
        this.#restart(what);
        return;
    }
  }

  /** R8.5: the locked process died; a new one takes over the session. */
  #restart(what: string): void {
    this.#phase = 'starting';
    const again: JSONRPCRequest[] = [];
    for (const request of this.#inFlight.values()) {
      if (request.method === 'tools/call') {
        this.#toClient(
          errorResponse(
            request.id,
            ErrorCode.InternalError,
            `the session's server process exited while this call ran (${what}); it was restarted on the same scope, but whether the command ran is unknown`,
          ),
          request.id,
        );
      } else {
        again.push(request); // reads and settings: safe to ask the new process
      }
    }
    this.#inFlight.clear();
    this.#progressTokens.clear();
    this.#held.unshift(...again);
    this.#startLocked();
  }

  #stopChild(): void {
    this.#generation += 1;
    this.#handshake = undefined;
    clearTimeout(this.#handshakeTimer);
    const child = this.#child;
    this.#child = undefined;
    if (child === undefined) return;
    const stopped = child.stop(this.#stopGraceMs).catch((error: unknown) => {
      this.#logger.warn({ err: error }, "isolated session: stopping the session's process failed");
    });
    this.#stopping.add(stopped);
    void stopped.finally(() => this.#stopping.delete(stopped));
  }

  // ── Ending ───────────────────────────────────────────────────────────────────────────────────

  #terminate(reason: TerminationReason, message: string): void {
    if (this.#phase === 'ended') return;
    const initializing = this.#phase === 'initializing';
    this.#phase = 'ended';
    this.#terminated = reason;
    this.#endMessage = message;
    this.#roots.cancel();
    this.#logger.error({ reason, scope: this.#scope }, `isolated session ended: ${message}`);
    const open: RequestId[] = [...this.#inFlight.values()].map((request) => request.id);
    if (initializing && this.#initialize !== undefined) open.push(this.#initialize.id);
    for (const held of this.#held) if ('method' in held && 'id' in held) open.push(held.id);
    this.#inFlight.clear();
    this.#progressTokens.clear();
    this.#held.splice(0);
    for (const id of open) this.#refuse(id);
    this.#stopChild();
    this.#options.onTerminated?.(reason);
  }

  #refuse(id: RequestId): void {
    const code =
      this.#terminated === 'child_failed' ? ErrorCode.InternalError : ErrorCode.InvalidRequest;
    this.#toClient(errorResponse(id, code, this.#endMessage), id);
  }

  // ── Wires ────────────────────────────────────────────────────────────────────────────────────

  #toChild(message: JSONRPCMessage | ReturnType<typeof errorResponse>): void {
    this.#child?.write(JSON.stringify(message));
  }

  #toClient(
    message: JSONRPCMessage | ReturnType<typeof errorResponse>,
    relatedRequestId?: RequestId,
  ): void {
    if (this.#upstreamClosed) return;
    const options = relatedRequestId === undefined ? undefined : { relatedRequestId };
    this.#sending = this.#sending
      .then(() => this.#upstream.send(message as JSONRPCMessage, options))
      .catch((error: unknown) => {
        this.#logger.warn({ err: error }, 'isolated session: could not send to the client');
      });
  }

  #newId(what: string): string {
    this.#ids += 1;
    return `${this.#nonce}:${what}:${String(this.#ids)}`;
  }
}

function initialized(): JSONRPCNotification {
  return { jsonrpc: '2.0', method: 'notifications/initialized' };
}

/** The real path of a directory, or the path as given when it cannot be resolved. */
function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
