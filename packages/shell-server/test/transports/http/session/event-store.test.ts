// R8.2: the event store of a Streamable HTTP session: ids unique across the session's streams and
// naming their stream; a replay sends what came after the id on that stream only, in order, without
// the priming events; bounded by count and bytes; the GET-stream events stored while no GET stream
// was open are offered to the next one.
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import {
  SessionEventStore,
  STANDALONE_STREAM_ID,
} from '../../../../src/transports/http/session/event-store.js';

const note = (n: number): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/message',
  params: { level: 'info', data: n },
});

async function replay(store: SessionEventStore, after: string) {
  const sent: { id: string; message: JSONRPCMessage }[] = [];
  const stream = await store.replayEventsAfter(after, {
    send: (id, message) => {
      sent.push({ id, message });
      return Promise.resolve();
    },
  });
  return { stream, sent };
}

describe('SessionEventStore', () => {
  it('R8.2: ids are unique across streams, name their stream, and a replay stays on its stream', async () => {
    const store = new SessionEventStore();
    store.attach();
    const a1 = await store.storeEvent('post-a', note(1));
    const g1 = await store.storeEvent(STANDALONE_STREAM_ID, note(2));
    const a2 = await store.storeEvent('post-a', note(3));
    const g2 = await store.storeEvent(STANDALONE_STREAM_ID, note(4));
    expect(new Set([a1, g1, a2, g2]).size).toBe(4);
    expect(await store.getStreamIdForEventId(a1)).toBe('post-a');
    expect(await store.getStreamIdForEventId(g1)).toBe(STANDALONE_STREAM_ID);
    const fromA = await replay(store, a1);
    expect(fromA.stream).toBe('post-a');
    expect(fromA.sent).toEqual([{ id: a2, message: note(3) }]);
    const fromG = await replay(store, g1);
    expect(fromG.sent.map((event) => event.id)).toEqual([g2]);
  });

  it('R8.2: priming events get an id but are never replayed', async () => {
    const store = new SessionEventStore();
    const priming = await store.storeEvent('post-b', {} as JSONRPCMessage);
    const answer = await store.storeEvent('post-b', { jsonrpc: '2.0', id: 1, result: {} });
    const { sent } = await replay(store, priming);
    expect(sent.map((event) => event.id)).toEqual([answer]);
  });

  it('R8.2: ids it did not issue (malformed, ahead of it, an unknown stream) are not its own', async () => {
    const store = new SessionEventStore();
    await store.storeEvent('post-c', note(1));
    for (const id of ['', 'nonsense', 'post-c:', ':1', 'post-c:99', 'other:1', 'post-c:1.5']) {
      expect(await store.getStreamIdForEventId(id), id).toBeUndefined();
    }
  });

  it('R8.2: the oldest events go beyond the count or the bytes, the newest always stays', async () => {
    const store = new SessionEventStore({ maxEvents: 3, maxBytes: 1_000_000 });
    const ids = [];
    for (let n = 0; n < 5; n++) ids.push(await store.storeEvent('s', note(n)));
    expect(store.size).toBe(3);
    const { sent } = await replay(store, 's:0');
    expect(sent.map((event) => event.message)).toEqual([note(2), note(3), note(4)]);

    const small = new SessionEventStore({ maxEvents: 100, maxBytes: 200 });
    const big = {
      jsonrpc: '2.0',
      method: 'x',
      params: { text: 'y'.repeat(500) },
    } as JSONRPCMessage;
    await small.storeEvent('s', note(1));
    await small.storeEvent('s', big);
    expect(small.size).toBe(1);
  });

  it('R8.2: GET-stream events stored while no GET stream is open are offered to the next one, once', async () => {
    const store = new SessionEventStore();
    expect(store.missedCursor()).toBeUndefined();
    await store.storeEvent('post-d', note(0)); // a POST stream's: not the GET stream's to deliver
    expect(store.missedCursor()).toBeUndefined();
    const missed = await store.storeEvent(STANDALONE_STREAM_ID, note(1));
    const cursor = store.missedCursor();
    expect(cursor).toBeDefined();
    const { sent } = await replay(store, cursor ?? '');
    expect(sent.map((event) => event.id)).toEqual([missed]);
    store.attach();
    expect(store.missedCursor()).toBeUndefined();
    await store.storeEvent(STANDALONE_STREAM_ID, note(2)); // written to the open stream
    expect(store.missedCursor()).toBeUndefined();
    store.detach();
    const later = await store.storeEvent(STANDALONE_STREAM_ID, note(3));
    const next = await replay(store, store.missedCursor() ?? '');
    expect(next.sent.map((event) => event.id)).toEqual([later]);
  });
});
