// The stdio transport (newline-delimited JSON-RPC), in place of the SDK's StdioServerTransport,
// which cannot keep a session going past a bad message (SDK 1.32, shared/stdio.js): its ReadBuffer
// throws once 10 MiB are buffered without a newline and the transport then closes itself (the
// server exits 0 with nothing answered); a line that is not JSON, or not JSON-RPC, only reaches
// onerror, so the client waits for an answer that never comes. Here every such line is answered
// with a JSON-RPC error (SPEC §6) and the next line is served as usual.
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
} from '@modelcontextprotocol/sdk/types.js';
import { errorResponse, readMessage, type ErrorResponse } from './incoming.js';
import { LineFramer, type Frame } from './line-framer.js';
import { tooLarge } from './oversized.js';

/**
 * The largest message accepted, in bytes of one line without its newline: 10 MiB, the SDK's own
 * stdio bound (so what its clients read back, they may also send), far above any real tool call,
 * and the most the server holds for one incoming line. Longer lines are discarded as they arrive.
 */
export const STDIO_MESSAGE_LIMIT_BYTES = 10 * 1024 * 1024;

export interface StdioTransportOptions {
  readonly input?: Readable;
  readonly output?: Writable;
  readonly maxMessageBytes?: number;
  /** One line saying what is wrong with a request's params (answered -32602), else undefined. */
  readonly checkParams?: (request: JSONRPCRequest) => string | undefined;
}

/** MCP over a byte stream pair, one JSON-RPC message per line; within the SDK's Transport interface. */
export class StdioTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?:
    (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;

  readonly #input: Readable;
  readonly #output: Writable;
  readonly #limit: number;
  readonly #checkParams: StdioTransportOptions['checkParams'];
  readonly #framer: LineFramer;
  #started = false;
  #closed = false;

  constructor(options: StdioTransportOptions = {}) {
    this.#input = options.input ?? process.stdin;
    this.#output = options.output ?? process.stdout;
    this.#limit = options.maxMessageBytes ?? STDIO_MESSAGE_LIMIT_BYTES;
    this.#checkParams = options.checkParams;
    this.#framer = new LineFramer(this.#limit);
  }

  start(): Promise<void> {
    if (this.#started) throw new Error('StdioTransport already started');
    this.#started = true;
    this.#input.on('data', this.#onData);
    this.#input.on('end', this.#onEnd);
    this.#input.on('close', this.#onEnd);
    this.#input.on('error', this.#onError);
    this.#output.on('error', this.#onError);
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.#write(message);
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.#input.off('data', this.#onData);
    this.#input.off('end', this.#onEnd);
    this.#input.off('close', this.#onEnd);
    this.#input.off('error', this.#onError);
    this.#output.off('error', this.#onError);
    // Paused, stdin no longer keeps the process alive.
    if (this.#input.listenerCount('data') === 0) this.#input.pause();
    this.onclose?.();
    return Promise.resolve();
  }

  readonly #onData = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    for (const frame of this.#framer.push(bytes)) this.#handle(frame);
  };

  /**
   * The client went away. An unterminated last line that is oversized or malformed still gets its
   * error; a valid one is delivered, but like every request in flight at this point it is
   * abandoned when the session closes (the server shuts down when its client leaves).
   */
  readonly #onEnd = (): void => {
    if (this.#closed) return;
    const last = this.#framer.end();
    if (last !== undefined) this.#handle(last);
    void this.close();
  };

  readonly #onError = (error: Error): void => {
    this.onerror?.(error);
  };

  #handle(frame: Frame): void {
    if (frame.kind === 'oversized') {
      this.#refuse(tooLarge(frame.head, frame.tail, frame.size, this.#limit));
      return;
    }
    const line = frame.bytes.toString('utf8').replace(/\r$/, '');
    // Blank lines carry no message, so there is nothing to answer.
    if (line.trim() === '') return;
    const incoming = readMessage(line);
    if ('error' in incoming) {
      this.#refuse(incoming.error);
      return;
    }
    const { message } = incoming;
    // Already validated as a message: a method and an id make it a request.
    if ('method' in message && 'id' in message) {
      const problem = this.#checkParams?.(message);
      if (problem !== undefined) {
        this.#refuse(errorResponse(message.id, ErrorCode.InvalidParams, problem));
        return;
      }
    }
    this.onmessage?.(message);
  }

  /** Answers a message that never reaches the server, and reports it (the server logs it). */
  #refuse(response: ErrorResponse): void {
    this.onerror?.(new Error(`refused a message: ${response.error.message}`));
    this.#write(response).catch((error: unknown) =>
      this.onerror?.(error instanceof Error ? error : new Error(String(error))),
    );
  }

  /** One line out; resolves when the stream takes it (or once it drains), like the SDK's. */
  #write(message: JSONRPCMessage | ErrorResponse): Promise<void> {
    return new Promise((resolve, reject) => {
      const line = `${JSON.stringify(message)}\n`;
      const accepted = this.#output.write(line, (error) => {
        if (error) reject(error);
      });
      if (accepted) resolve();
      else this.#output.once('drain', resolve);
    });
  }
}
