// One JSON-RPC batch being answered (JSON-RPC 2.0 §6): the responses of its requests, in the order
// they come, are sent together as one array once every request of the batch has its response.
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { ErrorResponse } from './incoming.js';

/** What a batch's response array holds. */
export type Answer = JSONRPCMessage | ErrorResponse;

export class Batch {
  readonly #answers: Answer[] = [];
  readonly #pending = new Set<RequestId>();
  #sealed = false;
  #done = false;

  /** A request of this batch that the server will answer. */
  expect(id: RequestId): void {
    this.#pending.add(id);
  }

  /** An element refused before it reached the server. */
  refuse(error: ErrorResponse): void {
    this.#answers.push(error);
  }

  answer(id: RequestId, response: Answer): void {
    this.#pending.delete(id);
    this.#answers.push(response);
  }

  /** A request the client cancelled: it gets no response, and the batch no longer waits for it. */
  abandon(id: RequestId): void {
    this.#pending.delete(id);
  }

  /** Every element has been handed on; responses may be complete from now on. */
  seal(): void {
    this.#sealed = true;
  }

  /** The responses, once (and only once) all are known; undefined before and after. */
  complete(): readonly Answer[] | undefined {
    if (this.#done || !this.#sealed || this.#pending.size > 0) return undefined;
    this.#done = true;
    return this.#answers;
  }
}
