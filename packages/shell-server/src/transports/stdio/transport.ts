// The stdio transport (newline-delimited JSON-RPC), in place of the SDK's StdioServerTransport,
// which cannot keep a session going past a bad message (SDK 1.32, shared/stdio.js): its ReadBuffer
// throws once 10 MiB are buffered without a newline and the transport then closes itself (the
// server exits 0 with nothing answered); a line that is not JSON, or not JSON-RPC, only reaches
// onerror, so the client waits for an answer that never comes. Here every such line is answered
// with a JSON-RPC error (SPEC §6) and the next line is served as usual. A line holding a JSON-RPC
// batch (required by the 2025-03-26 revision, which the server agrees to) is answered with one line
// holding the array of its responses, once all of them are known (an initialize in it is refused:
// that revision forbids it there; batches are accepted whatever version was negotiated). While a
// batch is pending, the server's notifications/message (completion pushes, R2.2, and livelog
// alerts) are held back and written after its responses: a push names an operation id the client
// first learns from the batch's `started` answer, so it must not arrive before that answer.
// Progress of the batch's own requests still goes out at once (it belongs to requests that are
// open). The hold is simple: while any batch is pending every such message waits, also the push of
// an operation started outside the batch (it is delayed by at most as long as the batch takes), and
// at most HELD_MESSAGE_LIMIT messages are held; beyond that they are written at once rather than
// buffered without bound.
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type {
  JSONRPCMessage,
  MessageExtraInfo,
  RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { Batch, type Answer } from '../../jsonrpc/batch.js';
import { RpcCode } from '../../jsonrpc/codes.js';
import {
  decodeText,
  errorResponse,
  readLine,
  type ErrorResponse,
  type Incoming,
} from '../../jsonrpc/incoming.js';
import { LineFramer, type Frame } from '../../jsonrpc/line-framer.js';
import { cancelledRequestId, classify } from '../../jsonrpc/message-kind.js';
import { tooLarge } from '../../jsonrpc/oversized.js';
import { onTheWire } from '../../jsonrpc/wire-error.js';

/**
 * The largest message accepted, in bytes of one line without its newline: 10 MiB, the SDK's own
 * stdio bound (so what its clients read back, they may also send), far above any real tool call,
 * and the most the server holds for one incoming line. Longer lines are discarded as they arrive.
 */
export const STDIO_MESSAGE_LIMIT_BYTES = 10 * 1024 * 1024;

/** At most this many notifications/message wait for pending batches; later ones go out at once. */
export const HELD_MESSAGE_LIMIT = 1000;

/** A message held back until the pending batches are answered, and its sender's promise. */
interface Held {
  readonly message: Answer;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export interface StdioTransportOptions {
  readonly input?: Readable;
  readonly output?: Writable;
  readonly maxMessageBytes?: number;
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
  readonly #framer: LineFramer;
  /** The open batch of each request id sent in a batch and not answered yet. */
  readonly #batchOf = new Map<RequestId, Batch>();
  /** Batches whose responses have not been written yet. */
  readonly #pendingBatches = new Set<Batch>();
  /** notifications/message sent while a batch was pending, in the order they were sent. */
  #held: Held[] = [];
  #started = false;
  #closed = false;

  constructor(options: StdioTransportOptions = {}) {
    this.#input = options.input ?? process.stdin;
    this.#output = options.output ?? process.stdout;
    this.#limit = options.maxMessageBytes ?? STDIO_MESSAGE_LIMIT_BYTES;
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
    const outgoing = onTheWire(message);
    const answer = classify(outgoing);
    const id = answer?.kind === 'response' ? answer.message.id : undefined;
    if (id !== undefined) {
      const batch = this.#batchOf.get(id);
      if (batch !== undefined) {
        this.#batchOf.delete(id);
        batch.answer(id, outgoing);
        return this.#flush(batch);
      }
    }
    if (
      this.#pendingBatches.size > 0 &&
      this.#held.length < HELD_MESSAGE_LIMIT &&
      'method' in outgoing &&
      outgoing.method === 'notifications/message'
    ) {
      return new Promise((resolve, reject) => {
        this.#held.push({ message: outgoing, resolve, reject });
      });
    }
    return this.#write(outgoing);
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
    // The session is over: held messages have no one to go to; their senders are not left waiting.
    for (const held of this.#held.splice(0)) held.resolve();
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
    // The same check as every transport's (incoming.ts): not UTF-8 or not JSON is -32700, not
    // JSON-RPC -32600, wrong protocol params -32602.
    const text = decodeText(frame.bytes);
    if (typeof text !== 'string') {
      this.#refuse(text);
      return;
    }
    const line = text.replace(/\r$/, '');
    // Blank lines carry no message, so there is nothing to answer.
    if (line.trim() === '') return;
    const read = readLine(line);
    if ('batch' in read) {
      this.#handleBatch(read.batch);
      return;
    }
    if ('error' in read) {
      this.#refuse(read.error);
      return;
    }
    this.#deliver(read.message);
  }

  #deliver(message: JSONRPCMessage): void {
    // A request of a batch that the client cancels gets no response: its batch stops waiting.
    const kind = classify(message);
    const requestId = kind?.kind === 'notification' ? cancelledRequestId(kind.message) : undefined;
    const batch = requestId === undefined ? undefined : this.#batchOf.get(requestId);
    if (requestId !== undefined && batch !== undefined) {
      this.#batchOf.delete(requestId);
      batch.abandon(requestId);
      void this.#flush(batch);
    }
    this.onmessage?.(message);
  }

  /**
   * Every element is checked like a line of its own; refused elements are answered in the batch's
   * response, the others go to the server, whose responses to the batch's requests are collected.
   */
  #handleBatch(items: readonly Incoming[]): void {
    const batch = new Batch();
    this.#pendingBatches.add(batch);
    const accepted: JSONRPCMessage[] = [];
    for (const item of items) {
      let problem = 'error' in item ? item.error : undefined;
      // The 2025-03-26 revision: "the initialize request MUST NOT be part of a JSON-RPC batch".
      if (
        problem === undefined &&
        'message' in item &&
        'method' in item.message &&
        'id' in item.message &&
        item.message.method === 'initialize'
      ) {
        problem = errorResponse(
          item.message.id,
          RpcCode.InvalidRequest,
          'Invalid Request: initialize must not be part of a JSON-RPC batch',
        );
      }
      if (problem === undefined && 'message' in item && 'method' in item.message) {
        const { message } = item;
        if ('id' in message) {
          if (this.#batchOf.has(message.id)) {
            problem = errorResponse(
              null,
              RpcCode.InvalidRequest,
              `Invalid Request: id ${JSON.stringify(message.id)} is already in use`,
            );
          } else {
            this.#batchOf.set(message.id, batch);
            batch.expect(message.id);
          }
        }
      }
      if (problem !== undefined) {
        this.onerror?.(new Error(`refused a message: ${problem.error.message}`));
        batch.refuse(problem);
      } else if ('message' in item) {
        accepted.push(item.message);
      }
    }
    for (const message of accepted) this.#deliver(message);
    batch.seal();
    void this.#flush(batch);
  }

  /**
   * Writes a batch's responses as one array once all are known (nothing for notifications only),
   * then, when no other batch is pending, the messages held back meanwhile, in order.
   */
  #flush(batch: Batch): Promise<void> {
    const answers: readonly Answer[] | undefined = batch.complete();
    if (answers === undefined) return Promise.resolve();
    this.#pendingBatches.delete(batch);
    const written =
      answers.length === 0
        ? Promise.resolve()
        : this.#write(answers).catch((error: unknown) =>
            this.onerror?.(error instanceof Error ? error : new Error(String(error))),
          );
    if (this.#pendingBatches.size === 0) this.#release();
    return written;
  }

  /** Writes the held messages (the stream keeps their order after the batch's responses). */
  #release(): void {
    for (const held of this.#held.splice(0)) {
      this.#write(held.message).then(held.resolve, held.reject);
    }
  }

  /** Answers a message that never reaches the server, and reports it (the server logs it). */
  #refuse(response: ErrorResponse): void {
    this.onerror?.(new Error(`refused a message: ${response.error.message}`));
    this.#write(response).catch((error: unknown) =>
      this.onerror?.(error instanceof Error ? error : new Error(String(error))),
    );
  }

  /** One line out; resolves when the stream takes it (or once it drains), like the SDK's. */
  #write(message: Answer | readonly Answer[]): Promise<void> {
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
