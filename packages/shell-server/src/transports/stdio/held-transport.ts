import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';

type Delivery = [JSONRPCMessage, MessageExtraInfo | undefined];

/**
 * A transport over one that is already reading: what arrives before whoever serves the connection
 * starts this one is held, then handed over in order on start(). It lets the connection's opening
 * message be looked at (`first`) before deciding, and loading, what answers it — and nothing that
 * came meanwhile is lost.
 *
 * Messages are handed over one at a time, each after the last one's handler has begun (a microtask
 * apart), not all the messages of a chunk of stdin in one go: a command's request then reaches the
 * pool's zygote before the next request is parsed, and the two overlap on the machine's cores.
 * Measured with 8 calls in flight (bench/README.md, issue 31): delivered all at once, a burst cost
 * a fifth more CPU per call and ran at 0.8× the calls/s.
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
  /** What came before start(); undefined once started. */
  #held: Delivery[] | undefined = [];
  /** What came since, not handed over yet. */
  readonly #queue: Delivery[] = [];
  #delivering = false;

  constructor(inner: Transport) {
    this.#inner = inner;
    let opened: (message: JSONRPCMessage | undefined) => void = () => undefined;
    let ended: () => void = () => undefined;
    this.first = new Promise((resolve) => (opened = resolve));
    this.closed = new Promise((resolve) => (ended = resolve));
    inner.onmessage = (message, extra) => {
      opened(message);
      if (this.#held !== undefined) {
        this.#held.push([message, extra]);
        return;
      }
      this.#queue.push([message, extra]);
      void this.#deliver();
    };
    inner.onerror = (error) => this.onerror?.(error);
    inner.onclose = () => {
      opened(undefined);
      ended();
      // The client has gone: what it sent and is not handed over yet would be answered to no one.
      this.#queue.length = 0;
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
    this.#queue.unshift(...held);
    void this.#deliver();
    return Promise.resolve();
  }

  send(...args: Parameters<Transport['send']>): Promise<void> {
    return this.#inner.send(...args);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  async #deliver(): Promise<void> {
    if (this.#delivering) return;
    this.#delivering = true;
    for (let next = this.#queue.shift(); next !== undefined; next = this.#queue.shift()) {
      this.onmessage?.(...next);
      await Promise.resolve();
    }
    this.#delivering = false;
  }
}
