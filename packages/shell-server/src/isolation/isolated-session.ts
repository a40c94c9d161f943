// One session of `--session-isolation` (R8D): the session's client on one side (`upstream`, any SDK
// Transport), on the other its own `ahma-shell --mode stdio --sandbox-scope <scope>` process
// (R8D.3). The rule it keeps: the scope is the client's first root (R8D.7), else the server's
// default (R8D.9), and is locked for the session's life (R8D.8): no command of the session ever
// runs in another scope, and a session that cannot keep to that ends instead. Its one process is
// started once the scope is locked; the client's initialize, which comes before the roots can be
// asked, is answered as that process would answer it (`answerInitialize`), then replayed to it.
// Transport-agnostic, so the HTTP layer only creates one per session and routes its requests to it.
//
// This file takes the steps that change the session's life: locking the scope, starting,
// replacing and stopping its process, ending. The rest is in parts that each keep one rule:
//
// - handshake.ts: the phases from initialize to the locked scope, and what a new process is told;
// - session-roots.ts: asking the client for its roots, bounded, and the scope they give;
// - from-client.ts, from-process.ts: what each message of either side does;
// - message-router.ts: where a message goes once the session serves, and what waits until then;
// - restart-policy.ts: a process that dies is replaced once; a crash loop ends the session;
// - termination.ts: why a session ends by itself, and what its requests get from then on;
// - process-slot.ts, client-wire.ts: the two ends (one process at a time; sends in order).
import type { Environment } from '@ahma/core';
import { randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { errorResponse } from '../jsonrpc/incoming.js';
import type { ResponseMessage } from '../jsonrpc/message-kind.js';
import { keyOf } from '../jsonrpc/request-key.js';
import { ahmaShellBin } from '../package.js';
import type { ChildCommand, ChildExit } from './child.js';
import { ClientWire } from './client-wire.js';
import { fromClient } from './from-client.js';
import { fromProcess } from './from-process.js';
import {
  HANDSHAKE_TIMEOUT_MS,
  Handshake,
  initializedNotification,
  replayedInitialize,
} from './handshake.js';
import { MessageRouter } from './message-router.js';
import type { SpareProcess } from './spare.js';
import { ProcessSlot } from './process-slot.js';
import {
  CrashWindow,
  afterCrash,
  callLost,
  describeExit,
  splitOpenRequests,
} from './restart-policy.js';
import type { RootPolicy } from './root-scope.js';
import type { SessionParts } from './session-parts.js';
import { RootsProbe, type RootsOutcome } from './session-roots.js';
import {
  diedAgain,
  initializeRefused,
  initializeUnanswered,
  invalidRoot,
  refusalCode,
  type Ending,
  type TerminationReason,
} from './termination.js';

export type { TerminationReason } from './termination.js';
export { DEFAULT_RESTART_WINDOW_MS } from './restart-policy.js';
export { DEFAULT_STOP_GRACE_MS } from './process-slot.js';

export interface IsolatedSessionOptions {
  /** The client's side: started here (do not start or connect it yourself). */
  readonly upstream: Transport;
  /**
   * The answer the session's process would give the client's initialize: the server's own, for
   * the process runs with its flags (protocol/initialize-answer.ts). A rejection is answered as an
   * internal error, and the client may try again.
   */
  readonly answerInitialize: (request: JSONRPCRequest) => Promise<ResponseMessage>;
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
  readonly env: Environment;
  readonly logger: Logger;
  /** How long to wait for the client's roots before the default scope is used. */
  readonly rootsTimeoutMs?: number;
  /** A crash within this long of the previous one ends the session instead of a restart. */
  readonly restartWindowMs?: number;
  /** How long a stopped process gets to close its runtime before its tree is killed. */
  readonly stopGraceMs?: number;
  /** The server's process started ahead (spare.ts), taken by the session's first start. */
  readonly spare?: SpareProcess | undefined;
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

class Isolation {
  readonly #options: IsolatedSessionOptions;
  readonly #logger: Logger;
  readonly #defaultScope: string;
  /** Prefix of the ids of the requests this session makes itself (never the client's). */
  readonly #nonce = `ahma-isolation-${randomBytes(6).toString('hex')}`;
  #ids = 0;

  readonly #handshake = new Handshake();
  readonly #crashes: CrashWindow;
  readonly #router: MessageRouter;
  readonly #process: ProcessSlot;
  readonly #roots: RootsProbe;
  readonly #client: ClientWire;
  /** What the message handlers (from-client.ts, from-process.ts) are given. */
  readonly #parts: SessionParts;
  #replayTimer: NodeJS.Timeout | undefined;
  /** Why the session ended by itself, and what every request gets from then on. */
  #ending: Ending | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: IsolatedSessionOptions) {
    this.#options = options;
    this.#logger = options.logger;
    this.#defaultScope = realPath(options.defaultScope);
    const rootsTimeoutMs = options.rootsTimeoutMs ?? DEFAULT_ROOTS_TIMEOUT_MS;
    this.#crashes = new CrashWindow(options.restartWindowMs);
    this.#router = new MessageRouter({
      toChild: (message) => this.#process.write(message),
      toClient: (message, relatedRequestId) => this.#client.send(message, relatedRequestId),
    });
    this.#process = new ProcessSlot({
      command: options.childCommand ?? {
        file: process.execPath,
        args: [ahmaShellBin(), '--mode', 'stdio'],
      },
      env: options.env,
      logger: this.#logger,
      stopGraceMs: options.stopGraceMs,
      spare: options.spare,
      onMessage: (message) => fromProcess(this.#parts, message),
      onExit: (exit, lastWords) => this.#processExited(exit, lastWords),
    });
    this.#roots = new RootsProbe({
      idPrefix: `${this.#nonce}:roots:`,
      timeoutMs: rootsTimeoutMs,
      policy: options.roots ?? { allowed: [this.#defaultScope], forbidden: [], privatePaths: [] },
      send: (request, relatedRequestId) => this.#client.send(request, relatedRequestId),
      onSettled: (outcome) => this.#rootsSettled(outcome),
    });
    this.#client = new ClientWire(options.upstream, this.#logger, {
      onMessage: (message) => fromClient(this.#parts, message),
      onClose: () => void this.close(),
    });
    this.#parts = {
      handshake: this.#handshake,
      router: this.#router,
      roots: this.#roots,
      process: this.#process,
      client: this.#client,
      logger: this.#logger,
      rootsTimeoutMs,
      closing: () => this.#closing !== undefined,
      terminate: (ending) => this.#terminate(ending),
      refuse: (id) => this.#refuse(id),
      replayAnswered: (message, sendInitialized) => this.#replayAnswered(message, sendInitialized),
      answerInitialize: options.answerInitialize,
    };
    this.#client.start(() => void this.close());
  }

  get scope(): string | undefined {
    return this.#handshake.scope;
  }

  get terminated(): TerminationReason | undefined {
    return this.#ending?.reason;
  }

  get childPid(): number | undefined {
    return this.#process.pid;
  }

  close(): Promise<void> {
    return (this.#closing ??= (async () => {
      this.#handshake.end();
      this.#roots.cancel();
      this.#stopProcess();
      await this.#process.stopped();
      await this.#client.close();
    })());
  }

  // ── The scope ────────────────────────────────────────────────────────────────────────────────

  #rootsSettled(outcome: RootsOutcome): void {
    if (!this.#handshake.awaitsScope) return;
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
        this.#terminate(invalidRoot(outcome.message));
        return;
    }
  }

  #lock(scope: string, source: string): void {
    this.#handshake.lock(scope);
    this.#logger.info({ scope, source }, 'isolated session: sandbox scope locked');
    this.#startLocked();
  }

  #serve(): void {
    this.#handshake.serve();
    this.#router.release();
  }

  // ── The process ──────────────────────────────────────────────────────────────────────────────

  /** Starts the process on the locked scope (anew after a crash) and replays the handshake (R8D.14). */
  #startLocked(): void {
    const scope = this.#handshake.scope;
    const initialize = this.#handshake.initialize;
    if (scope === undefined || initialize === undefined) return;
    this.#stopProcess();
    this.#router.forgetChildAsks();
    this.#process.start(scope);
    const id = this.#newId('initialize');
    this.#handshake.replayStarted(keyOf(id));
    this.#replayTimer = setTimeout(() => {
      this.#terminate(initializeUnanswered(HANDSHAKE_TIMEOUT_MS));
    }, HANDSHAKE_TIMEOUT_MS);
    this.#process.write(replayedInitialize(id, initialize));
  }

  /** The new process answered the replayed initialize: told the rest, it serves the session. */
  #replayAnswered(message: ResponseMessage, sendInitialized: boolean): void {
    clearTimeout(this.#replayTimer);
    if ('error' in message) {
      this.#terminate(initializeRefused(message.error.message));
      return;
    }
    if (sendInitialized) this.#process.write(initializedNotification());
    const level = this.#router.logLevel;
    if (level !== undefined) {
      const id = this.#newId('setLevel');
      this.#router.swallow(id);
      this.#process.write({ jsonrpc: '2.0', id, method: 'logging/setLevel', params: level });
    }
    this.#serve();
  }

  /** The process exited unasked (restart-policy.ts). */
  #processExited(exit: ChildExit, lastWords: string | undefined): void {
    if (this.#handshake.ended) return;
    const what = describeExit(exit, lastWords);
    if (this.#crashes.crashed(Date.now()) === 'end') {
      this.#terminate(diedAgain(what));
      return;
    }
    this.#logger.warn(
      { exit: what, scope: this.#process.scope },
      "isolated session: the session's server process exited; restarting it",
    );
    if (afterCrash(this.#handshake.phase) === 'restart_on_scope') this.#restart(what);
  }

  /** R8.5: the locked process died; a new one takes over the session. */
  #restart(exit: string): void {
    this.#handshake.restart();
    const { failed, resent } = splitOpenRequests(this.#router.takeInFlight());
    for (const request of failed) this.#client.send(callLost(request, exit), request.id);
    this.#router.requeue(resent);
    this.#startLocked();
  }

  #stopProcess(): void {
    this.#handshake.replayAbandoned();
    clearTimeout(this.#replayTimer);
    this.#process.stop();
  }

  // ── Ending ───────────────────────────────────────────────────────────────────────────────────

  #terminate(ending: Ending): void {
    if (this.#handshake.ended) return;
    const phase = this.#handshake.end();
    this.#ending = ending;
    this.#roots.cancel();
    this.#logger.error(
      { reason: ending.reason, scope: this.#handshake.scope },
      `isolated session ended: ${ending.message}`,
    );
    // The client's initialize is open only while initializing, when nothing else was sent yet.
    const initialize = phase === 'initializing' ? this.#handshake.initialize : undefined;
    const open = this.#router.takeOpenRequests();
    if (initialize !== undefined) open.unshift(initialize.id);
    for (const id of open) this.#refuse(id);
    this.#stopProcess();
    this.#options.onTerminated?.(ending.reason);
  }

  /** A request of a session that ended by itself: answered with why. */
  #refuse(id: RequestId): void {
    const ending = this.#ending;
    if (ending === undefined) return; // not ended by itself
    this.#client.send(errorResponse(id, refusalCode(ending.reason), ending.message), id);
  }

  #newId(what: string): string {
    this.#ids += 1;
    return `${this.#nonce}:${what}:${String(this.#ids)}`;
  }
}

/** The real path of a directory, or the path as given when it cannot be resolved. */
function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
