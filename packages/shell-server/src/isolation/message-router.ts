// Where each message of an isolated session goes, between its client and its process (R8D.3). The
// rules: every message passes unchanged; a client message waits (is held) until the session serves,
// and the held ones go first, in the order they came; an answer goes back on the stream of the
// request it answers, and an answer to no open request of the client (cancelled, or the session's
// own) goes nowhere; progress goes on the stream of the request that asked for it (its
// progressToken) while that request is open, and nowhere after; a question of the process goes to
// the client, and the client's answer to the process that asked, if it still runs. What the
// session decides (handshake.ts) is not decided here: this only keeps track of who asked what.
import type {
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { errorResponse, type ErrorResponse } from '../jsonrpc/incoming.js';
import { progressOf, progressTokenOf, type ResponseMessage } from '../jsonrpc/message-kind.js';
import { keyOf } from '../jsonrpc/request-key.js';

/** What goes out: a message passed on, or an error the session answers itself. */
export type Outgoing = JSONRPCMessage | ErrorResponse;

export interface RouterWires {
  /** To the current process (none: dropped). */
  readonly toChild: (message: Outgoing) => void;
  /** To the client; `relatedRequestId` puts it on that request's stream. */
  readonly toClient: (message: Outgoing, relatedRequestId?: RequestId) => void;
}

export class MessageRouter {
  readonly #wires: RouterWires;
  /** Client messages waiting for the session to serve, in arrival order. */
  readonly #held: JSONRPCMessage[] = [];
  /** Client requests the current process has not answered. */
  readonly #inFlight = new Map<string, JSONRPCRequest>();
  /** Progress tokens of those requests → the request (progress goes on its stream). */
  readonly #progressTokens = new Map<string, RequestId>();
  /** Requests of the current process to the client, not answered yet. */
  readonly #childAsks = new Set<string>();
  /** Ids of requests the session made to the process whose answers are no one's business. */
  readonly #swallowed = new Set<string>();
  /** The last logging/setLevel params the client sent: replayed to a restarted process. */
  #logLevel: JSONRPCRequest['params'];

  constructor(wires: RouterWires) {
    this.#wires = wires;
  }

  get logLevel(): JSONRPCRequest['params'] {
    return this.#logLevel;
  }

  // ── Client → process ─────────────────────────────────────────────────────────────────────────

  /** A client message: to the process if the session serves and nothing is held, else held. */
  fromClient(message: JSONRPCMessage, serving: boolean): void {
    if (serving && this.#held.length === 0) this.#forward(message);
    else this.#held.push(message);
  }

  /** The session serves: the held messages go to the process, in order. */
  release(): void {
    for (const message of this.#held.splice(0)) this.#forward(message);
  }

  /**
   * The client cancelled request `id`: true when it was still held (dropped: never sent, nothing to
   * cancel); otherwise its answer and progress have nowhere to go any more.
   */
  cancelled(id: RequestId): boolean {
    const key = keyOf(id);
    const held = this.#held.findIndex(
      (message) => 'method' in message && 'id' in message && keyOf(message.id) === key,
    );
    if (held !== -1) {
      this.#held.splice(held, 1);
      return true;
    }
    this.#settle(key);
    return false;
  }

  /** The client's answer to a question of the process: false when no live process asked it. */
  clientAnswered(message: ResponseMessage): boolean {
    if (!this.#childAsks.delete(keyOf(message.id))) return false;
    this.#wires.toChild(message);
    return true;
  }

  // ── Process → client ─────────────────────────────────────────────────────────────────────────

  /** The process answered: to the client if it answers an open request of the client's. */
  childAnswered(message: ResponseMessage): void {
    const key = keyOf(message.id);
    if (!this.#inFlight.has(key)) return; // cancelled, or not the client's
    this.#settle(key);
    this.#wires.toClient(message, message.id);
  }

  /**
   * A question of the process to the client; refused while the session does not serve (the first
   * process has no business asking the client anything).
   */
  childAsked(request: JSONRPCRequest, serving: boolean): void {
    if (!serving) {
      this.#wires.toChild(
        errorResponse(request.id, RpcCode.InternalError, 'the session is not ready'),
      );
      return;
    }
    this.#childAsks.add(keyOf(request.id));
    this.#wires.toClient(request);
  }

  /**
   * A notification of the process: progress on its request's stream (or nowhere), others as is.
   * Before the session serves, the first process's chatter (a tools/list_changed) is of no use to
   * anyone: dropped.
   */
  childNotified(notification: JSONRPCNotification, serving: boolean): void {
    if (!serving) return;
    if (notification.method === 'notifications/progress') {
      const token = progressOf(notification);
      const request = token === undefined ? undefined : this.#progressTokens.get(keyOf(token));
      // Progress of a request that is answered would only confuse the client.
      if (request !== undefined) this.#wires.toClient(notification, request);
      return;
    }
    this.#wires.toClient(notification);
  }

  // ── The session's own ────────────────────────────────────────────────────────────────────────

  /** A request of the session's own to the process: its answer is dropped. */
  swallow(id: RequestId): void {
    this.#swallowed.add(keyOf(id));
  }

  /** True (once) when `id` is one of the session's own requests. */
  swallowed(id: RequestId): boolean {
    return this.#swallowed.delete(keyOf(id));
  }

  // ── A process gone ───────────────────────────────────────────────────────────────────────────

  /** A new process: the questions of the old one will never take an answer. */
  forgetChildAsks(): void {
    this.#childAsks.clear();
  }

  /** The client requests the process was serving, in the order sent; no longer routed. */
  takeInFlight(): JSONRPCRequest[] {
    const requests = [...this.#inFlight.values()];
    this.#inFlight.clear();
    this.#progressTokens.clear();
    return requests;
  }

  /** Puts requests back at the head of the held ones, to be sent again once the session serves. */
  requeue(requests: readonly JSONRPCRequest[]): void {
    this.#held.unshift(...requests);
  }

  /**
   * The session ended: the ids of the client's open requests, those the process was serving, then
   * those held, in order; none of them is routed any more.
   */
  takeOpenRequests(): RequestId[] {
    const open = this.takeInFlight().map((request) => request.id);
    for (const held of this.#held.splice(0)) {
      if ('method' in held && 'id' in held) open.push(held.id);
    }
    return open;
  }

  // ──────────────────────────────────────────────────────────────────────────────────────────────

  /** A client message to the process, with what is needed to route its answers. */
  #forward(message: JSONRPCMessage): void {
    if ('method' in message && 'id' in message) {
      const key = keyOf(message.id);
      this.#inFlight.set(key, message);
      const token = progressTokenOf(message);
      if (token !== undefined) this.#progressTokens.set(keyOf(token), message.id);
      if (message.method === 'logging/setLevel') this.#logLevel = message.params;
    }
    this.#wires.toChild(message);
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
}
