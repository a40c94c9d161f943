// What each message of an isolated session's client does. The rules: once the session ended by
// itself every request gets why (termination.ts); initialize is answered by the session, as its
// process would answer it, once per session; ping is answered by the session itself until it
// serves, since no process runs before the scope is locked (R8D.8); notifications/initialized and
// notifications/roots/list_changed move the handshake (handshake.ts), and the latter never reaches
// a process; while the roots are awaited each message is a chance to ask for them again, a request
// on its own stream (R8D.7); everything else goes the router's way (message-router.ts).
import type { JSONRPCNotification, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { errorResponse } from '../jsonrpc/incoming.js';
import {
  cancelledRequestId,
  type MessageKind,
  type ResponseMessage,
} from '../jsonrpc/message-kind.js';
import type { SessionParts } from './session-parts.js';
import { rootsChanged } from './termination.js';

export function fromClient(session: SessionParts, message: MessageKind): void {
  if (session.handshake.ended) {
    // Ended by itself: every request gets the reason. Closed: the client is going.
    if (message.kind === 'request' && !session.closing()) session.refuse(message.message.id);
    return;
  }
  switch (message.kind) {
    case 'response':
      answered(session, message.message);
      return;
    case 'notification':
      notified(session, message.message);
      return;
    case 'request':
      asked(session, message.message);
      return;
  }
}

/** The client's answer: to the roots question it answers, or to the process that asked. */
function answered(session: SessionParts, message: ResponseMessage): void {
  if (session.roots.owns(message.id)) {
    session.roots.answer(message);
    return;
  }
  if (session.router.clientAnswered(message)) return;
  session.logger.debug({ id: message.id }, 'isolated session: an answer no live process asked for');
}

function notified(session: SessionParts, notification: JSONRPCNotification): void {
  const { handshake } = session;
  switch (notification.method) {
    case 'notifications/initialized': {
      const next = handshake.clientSentInitialized();
      if (next === 'remembered') return; // the handshake of a later process carries it
      if (next === 'seek_roots') {
        session.roots.seek(handshake.rootsDeclared);
        return;
      }
      break; // the scope was locked without waiting for it: the process gets it in order
    }
    case 'notifications/roots/list_changed': {
      const verdict = handshake.rootsChanged();
      if (verdict.kind === 'end') session.terminate(rootsChanged(verdict.scope));
      else if (verdict.kind === 'ask_again') session.roots.ask();
      return;
    }
    case 'notifications/cancelled': {
      const id = cancelledRequestId(notification);
      if (id !== undefined && session.router.cancelled(id)) return; // never sent: nothing to cancel
      break;
    }
  }
  if (handshake.seeksRoots) session.roots.ask();
  session.router.fromClient(notification, handshake.serving);
}

function asked(session: SessionParts, request: JSONRPCRequest): void {
  const { handshake } = session;
  if (request.method === 'initialize') {
    if (!handshake.clientInitialize(request)) {
      session.client.send(
        errorResponse(request.id, RpcCode.InvalidRequest, 'the session is already initialized'),
        request.id,
      );
      return;
    }
    void session.answerInitialize(request).then(
      (answer) => initializeAnswered(session, answer),
      (failure: unknown) => {
        session.logger.error(
          { err: failure },
          'isolated session: initialize could not be answered',
        );
        const error = { code: RpcCode.InternalError, message: 'initialize failed' };
        initializeAnswered(session, { jsonrpc: '2.0', id: request.id, error });
      },
    );
    return;
  }
  if (request.method === 'ping' && !handshake.serving) {
    session.client.send({ jsonrpc: '2.0', id: request.id, result: {} }, request.id);
    return;
  }
  // Over HTTP the first roots/list may have found no stream to go on: this request's has one.
  if (handshake.seeksRoots) session.roots.ask(request.id);
  session.router.fromClient(request, handshake.serving);
}

/** The client's initialize answered: the roots are awaited, or, after an error, it may try again. */
function initializeAnswered(session: SessionParts, answer: ResponseMessage): void {
  // Closed or ended meanwhile: the client is going, or its initialize was refused with the reason.
  if (session.handshake.ended) return;
  session.client.send(answer, answer.id);
  const next = session.handshake.initializeAnswered('error' in answer);
  if (next === 'retry') return;
  session.roots.startTimer(
    `the client's roots did not arrive within ${String(session.rootsTimeoutMs)} ms`,
  );
  if (next === 'seek_roots') session.roots.seek(session.handshake.rootsDeclared);
}
