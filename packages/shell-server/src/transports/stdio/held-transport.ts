import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';

/**
 * A transport over one that is already reading: what arrives before whoever serves the connection
 * starts this one is held, then handed over in order on start(). It lets the connection's opening
 * message be looked at (`first`) before deciding, and loading, what answers it — and nothing that
 * came meanwhile is lost.
 */
export class HeldTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?:
    (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;

  /** The opening message, or undefined when the connection ended before one came. */
  readonly first: Promise<JSONRPCMessage | undefined>;
  /** Resolves when the underlying transport has closed. */
  readonly closed: Promise<void>;

  readonly #inner: Transport;
  /** Undefined once started: from then on messages go straight through. */
  #held: [JSONRPCMessage, MessageExtraInfo | undefined][] | undefined = [];

  constructor(inner: Transport) {
    this.#inner = inner;
    let opened: (message: JSONRPCMessage | undefined) => void = () => undefined;
    let ended: () => void = () => undefined;
    this.first = new Promise((resolve) => (opened = resolve));
    this.closed = new Promise((resolve) => (ended = resolve));
    inner.onmessage = (message, extra) => {
      opened(message);
      if (this.#held === undefined) this.onmessage?.(message, extra);
      else this.#held.push([message, extra]);
    };
    inner.onerror = (error) => this.onerror?.(error);
    inner.onclose = () => {
      opened(undefined);
      ended();
      this.onclose?.();
    };
  }

  /** Starts reading the underlying transport (held until start()). */
  open(): Promise<void> {
    return this.#inner.start();
  }

  start(): Promise<void> {
    const held = this.#held ?? [];
    this.#held = undefined;
    for (const [message, extra] of held) this.onmessage?.(message, extra);
    return Promise.resolve();
  }

  send(...args: Parameters<Transport['send']>): Promise<void> {
    return this.#inner.send(...args);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}
