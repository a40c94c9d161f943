// What each message of an isolated session's process does. The rules: the answer to a replayed
// initialize is the session's (isolated-session.ts), and so are the answers to its own requests
// (dropped; an error is logged); everything else goes the router's way (message-router.ts), which
// refuses the process's questions and drops its notifications until the session serves.
import type { MessageKind, ResponseMessage } from '../jsonrpc/message-kind.js';
import { keyOf } from '../jsonrpc/request-key.js';
import type { SessionParts } from './session-parts.js';

export function fromProcess(session: SessionParts, message: MessageKind): void {
  if (session.handshake.ended) return;
  switch (message.kind) {
    case 'response':
      answered(session, message.message);
      return;
    case 'request':
      session.router.childAsked(message.message, session.handshake.serving);
      return;
    case 'notification':
      session.router.childNotified(message.message, session.handshake.serving);
      return;
  }
}

function answered(session: SessionParts, message: ResponseMessage): void {
  const { handshake } = session;
  const key = keyOf(message.id);
  const replay = handshake.replayAnswered(key);
  if (replay !== undefined) {
    session.replayAnswered(message, replay.sendInitialized);
    return;
  }
  if (session.router.swallowed(message.id)) {
    if ('error' in message) {
      session.logger.warn({ error: message.error }, 'isolated session: a replayed request failed');
    }
    return;
  }
  session.router.childAnswered(message);
}
