// What the handlers of an isolated session's messages (from-client.ts, from-process.ts) work with:
// the session's parts, each keeping its own rule, and the steps only the session itself takes
// (isolated-session.ts), with how its client's initialize is answered. The rule: a handler
// decides where one message goes and what it tells the parts; ending the session and finishing a
// replayed handshake are the session's own steps, since they stop or hand over its process.
import type { JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { ResponseMessage } from '../jsonrpc/message-kind.js';
import type { ClientWire } from './client-wire.js';
import type { Handshake } from './handshake.js';
import type { MessageRouter } from './message-router.js';
import type { ProcessSlot } from './process-slot.js';
import type { RootsProbe } from './session-roots.js';
import type { Ending } from './termination.js';

export interface SessionParts {
  readonly handshake: Handshake;
  readonly router: MessageRouter;
  readonly roots: RootsProbe;
  readonly process: ProcessSlot;
  readonly client: ClientWire;
  readonly logger: Logger;
  /** How long the client's roots are waited for, counted from the initialize answer. */
  readonly rootsTimeoutMs: number;
  /** Whether close() has begun: the client is going, and is answered nothing more. */
  closing(): boolean;
  /** Ends the session by itself: every open and later request gets `ending`'s message. */
  terminate(ending: Ending): void;
  /** Answers a request of a session that ended by itself with why it ended. */
  refuse(id: RequestId): void;
  /** A process on the locked scope answered the replayed initialize (R8D.14). */
  replayAnswered(message: ResponseMessage, sendInitialized: boolean): void;
  /** The answer to the client's initialize, as the session's process would give it. */
  answerInitialize(request: JSONRPCRequest): Promise<ResponseMessage>;
}
