// R8D.3: a message is routed by its kind, read from its shape, and passed on as the very object it
// was; SPEC §6: what is not a request, a notification or a response with an id is none of them.
import type { JSONRPCNotification, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import {
  cancelledRequestId,
  classify,
  isRequestId,
  progressOf,
  progressTokenOf,
} from '../../src/jsonrpc/message-kind.js';

describe.concurrent('classify', () => {
  it('R8D.3: a method with an id is a request, without one a notification, the object untouched', () => {
    const request = { jsonrpc: '2.0', id: 7, method: 'tools/list' };
    const notification = { jsonrpc: '2.0', method: 'notifications/initialized' };
    expect(classify(request)).toEqual({ kind: 'request', message: request });
    expect(classify(request)?.message).toBe(request);
    expect(classify(notification)).toEqual({ kind: 'notification', message: notification });
    expect(classify({ jsonrpc: '2.0', id: 'a', method: 'ping' })?.kind).toBe('request');
  });

  it('R8D.3: an id with a result or an error is a response', () => {
    const result = { jsonrpc: '2.0', id: 'x', result: {} };
    const error = { jsonrpc: '2.0', id: 3, error: { code: -32603, message: 'no' } };
    expect(classify(result)).toEqual({ kind: 'response', message: result });
    expect(classify(error)).toEqual({ kind: 'response', message: error });
  });

  it('SPEC §6: an id that is neither a string nor a number makes no request; a method that is no string makes none', () => {
    expect(classify({ jsonrpc: '2.0', id: null, method: 'ping' })?.kind).toBe('notification');
    expect(classify({ jsonrpc: '2.0', id: { n: 1 }, method: 'ping' })?.kind).toBe('notification');
    expect(classify({ jsonrpc: '2.0', id: 1, method: 42 })).toBeUndefined();
  });

  it('SPEC §6: an error without an id, a bare id, an array, a scalar or null is no message to route', () => {
    for (const value of [
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } },
      { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' } },
      { jsonrpc: '2.0', id: 1 },
      [{ jsonrpc: '2.0', id: 1, method: 'ping' }],
      'ping',
      1,
      null,
      undefined,
    ]) {
      expect(classify(value), JSON.stringify(value)).toBeUndefined();
    }
  });

  it('SPEC §6: a request id is a string or a number', () => {
    expect([0, 1.5, '', 'a'].every(isRequestId)).toBe(true);
    expect([null, undefined, true, {}, []].some(isRequestId)).toBe(false);
  });
});

describe.concurrent('what a message names', () => {
  const request = (params: unknown): JSONRPCRequest =>
    ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }) as JSONRPCRequest;
  const notification = (method: string, params: unknown): JSONRPCNotification =>
    ({ jsonrpc: '2.0', method, params }) as JSONRPCNotification;

  it("R8D.3: a request's progress token is params._meta.progressToken, when it is a string or a number", () => {
    expect(progressTokenOf(request({ _meta: { progressToken: 'p' } }))).toBe('p');
    expect(progressTokenOf(request({ _meta: { progressToken: 4 } }))).toBe(4);
    expect(progressTokenOf(request({ _meta: { progressToken: null } }))).toBeUndefined();
    expect(progressTokenOf(request({ _meta: {} }))).toBeUndefined();
    expect(progressTokenOf(request(undefined))).toBeUndefined();
  });

  it('R8D.3: a progress notification names its token in params.progressToken', () => {
    const progress = notification('notifications/progress', { progressToken: 'p', progress: 1 });
    expect(progressOf(progress)).toBe('p');
    expect(progressOf(notification('notifications/progress', {}))).toBeUndefined();
  });

  it('R8D.3: notifications/cancelled names its request in params.requestId; other notifications name none', () => {
    expect(cancelledRequestId(notification('notifications/cancelled', { requestId: 9 }))).toBe(9);
    expect(cancelledRequestId(notification('notifications/cancelled', { requestId: 'r' }))).toBe(
      'r',
    );
    expect(cancelledRequestId(notification('notifications/cancelled', {}))).toBeUndefined();
    expect(
      cancelledRequestId(notification('notifications/progress', { requestId: 9 })),
    ).toBeUndefined();
  });
});
