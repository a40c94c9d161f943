// The handshake of an isolated session as a pure state machine (isolation/handshake.ts): no
// process, no transport. R8D.8: nothing but initialize and ping is served before the scope is
// locked; R8D.7/R8D.9: the roots are sought once the client is initialized; R8D.12: roots
// changing after the lock end the session; R8D.14: a new process is told what the client said.
import type { JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import {
  Handshake,
  initializedNotification,
  replayedInitialize,
} from '../../src/isolation/handshake.js';

const initialize = (id: number | string, capabilities: object = { roots: {} }): JSONRPCRequest => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities,
    clientInfo: { name: 'test', version: '1' },
  },
});

/** A handshake whose client's initialize was answered, waiting for the roots. */
function awaitingRoots(capabilities?: object): Handshake {
  const handshake = new Handshake();
  handshake.clientInitialize(initialize(1, capabilities));
  handshake.initializeAnswered(false);
  return handshake;
}

describe.concurrent('Handshake', () => {
  it('R8D.8: a new session serves nothing and seeks no roots before the client is initialized', () => {
    const handshake = new Handshake();
    expect(handshake.phase).toBe('init');
    expect(handshake.serving).toBe(false);
    expect(handshake.seeksRoots).toBe(false);
    expect(handshake.awaitsScope).toBe(true);
    expect(handshake.scope).toBeUndefined();
  });

  it("R8D.8: the client's initialize is taken once; a second one is refused", () => {
    const handshake = new Handshake();
    expect(handshake.clientInitialize(initialize(1))).toBe(true);
    expect(handshake.phase).toBe('initializing');
    expect(handshake.clientInitialize(initialize(2))).toBe(false);
    expect(handshake.initialize?.id).toBe(1);
  });

  it('R8D.8: an error answer to initialize lets the client try again', () => {
    const handshake = new Handshake();
    handshake.clientInitialize(initialize(1));
    expect(handshake.initializeAnswered(true)).toBe('retry');
    expect(handshake.phase).toBe('init');
    expect(handshake.initialize).toBeUndefined();
    expect(handshake.clientInitialize(initialize(2))).toBe(true);
  });

  it('R8D.7: notifications/initialized before the initialize answer is remembered; the roots are sought with the answer', () => {
    const handshake = new Handshake();
    expect(handshake.clientSentInitialized()).toBe('remembered');
    handshake.clientInitialize(initialize(1));
    expect(handshake.clientSentInitialized()).toBe('remembered');
    expect(handshake.initializeAnswered(false)).toBe('seek_roots');
    expect(handshake.seeksRoots).toBe(true);
  });

  it('R8D.7: after the initialize answer the roots are sought once notifications/initialized comes', () => {
    const handshake = new Handshake();
    handshake.clientInitialize(initialize(1));
    expect(handshake.initializeAnswered(false)).toBe('await_initialized');
    expect(handshake.phase).toBe('roots');
    expect(handshake.seeksRoots).toBe(false);
    expect(handshake.clientSentInitialized()).toBe('seek_roots');
    expect(handshake.seeksRoots).toBe(true);
  });

  it('R8D.9: whether the client declared the roots capability is read from its initialize', () => {
    expect(awaitingRoots({ roots: { listChanged: true } }).rootsDeclared).toBe(true);
    expect(awaitingRoots({}).rootsDeclared).toBe(false);
    expect(new Handshake().rootsDeclared).toBe(false);
  });

  it('R8D.12: roots changing before the lock ask again (once the client can be asked); after the lock they end the session', () => {
    const handshake = awaitingRoots();
    expect(handshake.rootsChanged()).toEqual({ kind: 'ignore' });
    handshake.clientSentInitialized();
    expect(handshake.rootsChanged()).toEqual({ kind: 'ask_again' });
    handshake.lock('/work/a');
    expect(handshake.rootsChanged()).toEqual({ kind: 'end', scope: '/work/a' });
  });

  it('R8D.8: the scope, once locked, is settled for good; messages pass only once the process serves', () => {
    const handshake = awaitingRoots();
    handshake.clientSentInitialized();
    handshake.lock('/work/a');
    expect(handshake.phase).toBe('starting');
    expect(handshake.awaitsScope).toBe(false);
    expect(handshake.seeksRoots).toBe(false);
    expect(handshake.serving).toBe(false);
    expect(handshake.clientSentInitialized()).toBe('pass_on');
    handshake.serve();
    expect(handshake.serving).toBe(true);
    handshake.restart();
    expect(handshake.phase).toBe('starting');
    expect(handshake.scope).toBe('/work/a');
  });

  it('R8D.14: the replayed initialize is answered once, and is followed by initialized if the client had sent it when the replay began', () => {
    const handshake = awaitingRoots();
    handshake.lock('/work/a');
    handshake.replayStarted('k1');
    handshake.clientSentInitialized(); // after the replay began: passed on in order instead
    expect(handshake.replayAnswered('other')).toBeUndefined();
    expect(handshake.replayAnswered('k1')?.sendInitialized).toBe(false);
    expect(handshake.replayAnswered('k1')).toBeUndefined();
    handshake.replayStarted('k2');
    expect(handshake.replayAnswered('k2')?.sendInitialized).toBe(true);
  });

  it('R8D.14: a replay whose process was stopped is answered by no one', () => {
    const handshake = awaitingRoots();
    handshake.lock('/work/a');
    handshake.replayStarted('k1');
    handshake.replayAbandoned();
    expect(handshake.replayAnswered('k1')).toBeUndefined();
  });

  it("R8D.14: the replayed initialize carries the client's params under the session's own id", () => {
    const client = initialize(1);
    expect(replayedInitialize('session:initialize:1', client)).toEqual({
      jsonrpc: '2.0',
      id: 'session:initialize:1',
      method: 'initialize',
      params: client.params,
    });
    expect(initializedNotification()).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/initialized',
    });
  });

  it('R8D.13: an ended session reports the phase it ended in (an unanswered initialize is refused too) and awaits no scope', () => {
    const handshake = new Handshake();
    handshake.clientInitialize(initialize(1));
    expect(handshake.end()).toBe('initializing');
    expect(handshake.ended).toBe(true);
    expect(handshake.awaitsScope).toBe(false);
    expect(handshake.end()).toBe('ended');
  });
});
