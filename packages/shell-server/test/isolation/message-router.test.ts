// R8D.3 and R8D.8: where an isolated session's messages go, with recording wires in place of the
// client's transport and the process (isolation/message-router.ts keeps track of who asked what;
// no process is started here). Held until the session serves, then in order; answers and progress
// on their request's stream while it is open; the process's questions to the client and back.
import type {
  JSONRPCNotification,
  JSONRPCRequest,
  RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import type { ResponseMessage } from '../../src/jsonrpc/message-kind.js';
import { MessageRouter, type Outgoing } from '../../src/isolation/message-router.js';

interface Sent {
  readonly to: 'child' | 'client';
  readonly message: Outgoing;
  readonly related?: RequestId;
}

function router(): { readonly router: MessageRouter; readonly sent: Sent[] } {
  const sent: Sent[] = [];
  return {
    sent,
    router: new MessageRouter({
      toChild: (message) => sent.push({ to: 'child', message }),
      toClient: (message, related) =>
        sent.push(
          related === undefined ? { to: 'client', message } : { to: 'client', message, related },
        ),
    }),
  };
}

const request = (
  id: RequestId,
  method = 'tools/call',
  params?: JSONRPCRequest['params'],
): JSONRPCRequest =>
  params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
const notification = (
  method: string,
  params?: JSONRPCNotification['params'],
): JSONRPCNotification =>
  params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
const result = (id: RequestId): ResponseMessage => ({ jsonrpc: '2.0', id, result: {} });
/** What was sent, in order: a request's or an answer's id, a notification's method. */
const ids = (sent: readonly Sent[]) =>
  sent.map(({ message }) => ('id' in message ? message.id : 'method' in message && message.method));

describe.concurrent('MessageRouter: client → process', () => {
  it('R8D.8: client messages wait until the session serves, then go in the order they came', () => {
    const { router: r, sent } = router();
    r.fromClient(request(1), false);
    r.fromClient(notification('notifications/roots/list_changed'), false);
    r.fromClient(request(2), false);
    expect(sent).toEqual([]);
    r.release();
    expect(sent.map((item) => item.to)).toEqual(['child', 'child', 'child']);
    expect(ids(sent)).toEqual([1, 'notifications/roots/list_changed', 2]);
  });

  it('R8D.8: while some are held, a message of the serving session waits behind them', () => {
    const { router: r, sent } = router();
    r.fromClient(request(1), false);
    r.fromClient(request(2), true);
    expect(sent).toEqual([]);
    r.release();
    expect(ids(sent)).toEqual([1, 2]);
    r.fromClient(request(3), true);
    expect(ids(sent)).toEqual([1, 2, 3]);
  });

  it('R8D.3: a held request the client cancels is dropped; a sent one is no longer answered', () => {
    const { router: r, sent } = router();
    r.fromClient(request(1), false);
    expect(r.cancelled(1)).toBe(true);
    r.release();
    expect(sent).toEqual([]);
    r.fromClient(request(2), true);
    expect(r.cancelled(2)).toBe(false);
    r.childAnswered(result(2));
    expect(ids(sent)).toEqual([2]); // the request went; its answer did not come back
  });

  it("R8D.3, R8D.14: the client's last logging/setLevel is remembered once it was sent", () => {
    const { router: r } = router();
    r.fromClient(request(1, 'logging/setLevel', { level: 'debug' }), false);
    expect(r.logLevel).toBeUndefined();
    r.release();
    expect(r.logLevel).toEqual({ level: 'debug' });
  });
});

describe.concurrent('MessageRouter: process → client', () => {
  it("R8D.3: an answer goes back on its request's stream, once; an answer to no open request goes nowhere", () => {
    const { router: r, sent } = router();
    r.fromClient(request('a'), true);
    r.childAnswered(result('a'));
    r.childAnswered(result('a'));
    r.childAnswered(result('other'));
    expect(sent.slice(1)).toEqual([{ to: 'client', message: result('a'), related: 'a' }]);
  });

  it('R8D.3: ids 1 and "1" are two requests', () => {
    const { router: r, sent } = router();
    r.fromClient(request(1), true);
    r.childAnswered(result('1'));
    expect(sent).toHaveLength(1);
    r.childAnswered(result(1));
    expect(sent[1]?.related).toBe(1);
  });

  it('R8D.3: progress goes on the stream of the request that asked for it, and nowhere once it is answered', () => {
    const { router: r, sent } = router();
    r.fromClient(request(7, 'tools/call', { _meta: { progressToken: 'p7' } }), true);
    const progress = notification('notifications/progress', { progressToken: 'p7', progress: 1 });
    r.childNotified(progress, true);
    r.childNotified(notification('notifications/progress', { progressToken: 'nobody' }), true);
    r.childAnswered(result(7));
    r.childNotified(progress, true);
    expect(sent.slice(1)).toEqual([
      { to: 'client', message: progress, related: 7 },
      { to: 'client', message: result(7), related: 7 },
    ]);
  });

  it('R8D.3: other notifications of the serving process go to the client as they are; before, none does', () => {
    const { router: r, sent } = router();
    const changed = notification('notifications/tools/list_changed');
    r.childNotified(changed, false);
    expect(sent).toEqual([]);
    r.childNotified(changed, true);
    expect(sent).toEqual([{ to: 'client', message: changed }]);
  });

  it("R8D.3: the process's question goes to the client and the client's answer back to it, once", () => {
    const { router: r, sent } = router();
    const question = request('q1', 'roots/list');
    r.childAsked(question, true);
    expect(r.clientAnswered(result('q1'))).toBe(true);
    expect(r.clientAnswered(result('q1'))).toBe(false);
    expect(sent).toEqual([
      { to: 'client', message: question },
      { to: 'child', message: result('q1') },
    ]);
  });

  it('R8D.8: before the session serves, a question of the process is refused with -32603 and never reaches the client', () => {
    const { router: r, sent } = router();
    r.childAsked(request('q1', 'roots/list'), false);
    expect(sent).toEqual([
      {
        to: 'child',
        message: {
          jsonrpc: '2.0',
          id: 'q1',
          error: { code: -32603, message: 'the session is not ready' },
        },
      },
    ]);
    expect(r.clientAnswered(result('q1'))).toBe(false);
  });

  it("R8.5: a new process's predecessor's questions take no answer", () => {
    const { router: r, sent } = router();
    r.childAsked(request('q1', 'roots/list'), true);
    r.forgetChildAsks();
    expect(r.clientAnswered(result('q1'))).toBe(false);
    expect(sent).toHaveLength(1);
  });

  it("R8D.14: the answer to the session's own request is swallowed once and never reaches the client", () => {
    const { router: r, sent } = router();
    r.swallow('own:1');
    expect(r.swallowed('own:1')).toBe(true);
    expect(r.swallowed('own:1')).toBe(false);
    r.childAnswered(result('own:1'));
    expect(sent).toEqual([]);
  });
});

describe.concurrent('MessageRouter: a process gone', () => {
  it('R8.5: the requests in flight are taken away, and those put back go before the held ones', () => {
    const { router: r, sent } = router();
    r.fromClient(request(1, 'tools/call', { _meta: { progressToken: 'p1' } }), true);
    r.fromClient(request(2, 'tools/list'), true);
    const inFlight = r.takeInFlight();
    expect(inFlight.map((item) => item.id)).toEqual([1, 2]);
    expect(r.takeInFlight()).toEqual([]);
    // Their answers and progress are no longer routed.
    r.childNotified(notification('notifications/progress', { progressToken: 'p1' }), true);
    r.childAnswered(result(1));
    expect(sent).toHaveLength(2);
    r.fromClient(request(3), false);
    r.requeue([request(2, 'tools/list')]);
    r.release();
    expect(ids(sent.slice(2))).toEqual([2, 3]);
  });

  it("R8D.13: a session that ended takes the ids of the client's open requests: in flight, then held, not notifications", () => {
    const { router: r } = router();
    r.fromClient(request(1), true);
    r.fromClient(request('h1'), false);
    r.fromClient(notification('notifications/progress'), false);
    r.fromClient(request('h2'), false);
    expect(r.takeOpenRequests()).toEqual([1, 'h1', 'h2']);
    expect(r.takeOpenRequests()).toEqual([]);
  });
});
