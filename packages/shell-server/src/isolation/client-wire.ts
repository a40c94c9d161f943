// The isolated session's side of its client's transport (any SDK Transport: an HTTP session's, or
// an InMemoryTransport in tests). The rules: what the session sends goes out in the order it was
// sent, one send after the other, and nothing once the transport closed; a failed send is logged,
// never thrown at the session. Handlers set on the transport before are kept and called first,
// as the SDK's Protocol.connect chains them, since the HTTP layer watches the same transport.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { classify, type MessageKind } from '../jsonrpc/message-kind.js';
import type { Outgoing } from './message-router.js';

export interface ClientWireHandlers {
  /** A message of the client's, by kind (the message as its transport delivered it). */
  readonly onMessage: (message: MessageKind) => void;
  /** The transport closed (the client went, or was sent away). */
  readonly onClose: () => void;
}

export class ClientWire {
  readonly #upstream: Transport;
  readonly #logger: Logger;
  #closed = false;
  /** Sends to the client, in order. */
  #sending: Promise<void> = Promise.resolve();

  /** Takes over `upstream`'s handlers (chained); start() starts it. */
  constructor(upstream: Transport, logger: Logger, handlers: ClientWireHandlers) {
    this.#upstream = upstream;
    this.#logger = logger;
    const priorClose = upstream.onclose;
    upstream.onclose = () => {
      this.#closed = true;
      priorClose?.();
      handlers.onClose();
    };
    const priorError = upstream.onerror;
    upstream.onerror = (error) => {
      priorError?.(error);
      logger.warn({ err: error }, 'isolated session: transport error');
    };
    upstream.onmessage = (message) => {
      const classified = classify(message);
      // Nothing else can come: the transport checked the envelope already.
      if (classified !== undefined) handlers.onMessage(classified);
    };
  }

  /** Starts the transport; `onFailure` when it cannot start. */
  start(onFailure: () => void): void {
    this.#upstream.start().catch((error: unknown) => {
      this.#logger.error({ err: error }, 'isolated session: the transport did not start');
      onFailure();
    });
  }

  /** One message to the client, after those sent before; `relatedRequestId`: on its stream. */
  send(message: Outgoing, relatedRequestId?: RequestId): void {
    if (this.#closed) return;
    const options = relatedRequestId === undefined ? undefined : { relatedRequestId };
    this.#sending = this.#sending
      .then(() => this.#upstream.send(message as JSONRPCMessage, options))
      .catch((error: unknown) => {
        this.#logger.warn({ err: error }, 'isolated session: could not send to the client');
      });
  }

  /** Waits for the sends begun, then closes the transport (unless it closed itself). */
  async close(): Promise<void> {
    await this.#sending;
    if (this.#closed) return;
    this.#closed = true;
    await this.#upstream.close().catch(() => undefined);
  }
}
