// The event store of one Streamable HTTP session (R8.2): every SSE event the SDK transport writes
// gets an id here, and a client that reconnects with Last-Event-ID is sent what it missed on that
// stream. Our own because the SDK's example store grows without bound, cannot resume the GET stream
// (it takes the stream id as the text before the first "_", and the GET stream's id starts with
// one) and orders events of the same millisecond at random.
//
// - Ids are `<stream id>:<n>`, n counting up across the session: unique across its streams, ordered,
//   and naming their stream (the spec's SHOULD), so a replay never mixes streams.
// - Bounded: the oldest events go first beyond `maxEvents` or `maxBytes` (the newest always stays).
// - The GET stream's messages (completion pushes, alerts, tools/list_changed) that arrive while the
//   client has no GET stream open are remembered as missed; the session's next GET is sent them
//   even without Last-Event-ID (missedCursor()), so a push is not lost to a client that had not
//   opened its stream yet or lost it before seeing any event id.
// - When the session ends, clear() drops every event (the results they carry with them) and the
//   store keeps nothing stored afterwards: an ended session holds no memory through its store,
//   whoever still holds the store.
import type {
  EventId,
  EventStore,
  StreamId,
} from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The SDK transport's id of the standalone (GET) stream (webStandardStreamableHttp.js). */
export const STANDALONE_STREAM_ID = '_GET_stream';

export interface EventStoreLimits {
  readonly maxEvents: number;
  readonly maxBytes: number;
}

/** Per session: about what one busy client needs to ride out a reconnect. */
export const DEFAULT_EVENT_STORE_LIMITS: EventStoreLimits = {
  maxEvents: 1000,
  maxBytes: 8 * 1024 * 1024,
};

interface StoredEvent {
  readonly seq: number;
  readonly streamId: StreamId;
  readonly message: JSONRPCMessage;
  readonly bytes: number;
  /** The empty event that opens a POST stream (its id is a cursor; nothing to replay). */
  readonly priming: boolean;
}

export class SessionEventStore implements EventStore {
  readonly #limits: EventStoreLimits;
  /** Retained events, oldest first. */
  #events: StoredEvent[] = [];
  #bytes = 0;
  #seq = 0;
  /** Retained events per stream: a stream with none left is unknown to a resume. */
  readonly #perStream = new Map<StreamId, number>();
  /** GET streams open now (briefly two while a reconnect replaces its predecessor). */
  #attached = 0;
  /** The number before the first GET-stream event stored while no GET stream was open. */
  #missedAfter: number | undefined;
  /** Set by clear(): the session has ended, nothing is kept any more. */
  #cleared = false;

  constructor(limits: EventStoreLimits = DEFAULT_EVENT_STORE_LIMITS) {
    this.#limits = limits;
  }

  storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const seq = ++this.#seq;
    if (this.#cleared) return Promise.resolve(eventId(streamId, seq));
    const priming = !('jsonrpc' in message);
    const bytes = priming ? 0 : Buffer.byteLength(JSON.stringify(message));
    this.#events.push({ seq, streamId, message, bytes, priming });
    this.#bytes += bytes;
    this.#perStream.set(streamId, (this.#perStream.get(streamId) ?? 0) + 1);
    if (streamId === STANDALONE_STREAM_ID && this.#attached === 0) this.#missedAfter ??= seq - 1;
    this.#evict();
    return Promise.resolve(eventId(streamId, seq));
  }

  getStreamIdForEventId(id: EventId): Promise<StreamId | undefined> {
    return Promise.resolve(this.streamOf(id));
  }

  replayEventsAfter(
    lastEventId: EventId,
    { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> },
  ): Promise<StreamId> {
    const cursor = parse(lastEventId);
    if (cursor === undefined) return Promise.reject(new Error('not an event id of this session'));
    // A copy: events stored while the replay awaits are written live by the transport.
    const replay = this.#events.filter(
      (event) => event.streamId === cursor.streamId && event.seq > cursor.seq && !event.priming,
    );
    return (async () => {
      for (const event of replay) await send(eventId(event.streamId, event.seq), event.message);
      return cursor.streamId;
    })();
  }

  /** The stream an id of this session names; undefined for anything this store did not issue. */
  streamOf(id: EventId): StreamId | undefined {
    const cursor = parse(id);
    if (cursor === undefined || cursor.seq > this.#seq) return undefined;
    if (cursor.streamId !== STANDALONE_STREAM_ID && !this.#perStream.has(cursor.streamId)) {
      return undefined;
    }
    return cursor.streamId;
  }

  /** A GET stream opened (after its replay, if any): what it was sent is no longer missed. */
  attach(): void {
    this.#attached++;
    this.#missedAfter = undefined;
  }

  detach(): void {
    this.#attached = Math.max(0, this.#attached - 1);
  }

  /** The Last-Event-ID that replays the GET-stream events no open stream received, if any. */
  missedCursor(): EventId | undefined {
    return this.#missedAfter === undefined
      ? undefined
      : eventId(STANDALONE_STREAM_ID, this.#missedAfter);
  }

  /** The session ended: forgets every event; later ones get ids but are not kept. */
  clear(): void {
    this.#cleared = true;
    this.#events = [];
    this.#bytes = 0;
    this.#perStream.clear();
    this.#missedAfter = undefined;
  }

  /** Bytes of the retained events' messages (for tests and the debug log). */
  get bytes(): number {
    return this.#bytes;
  }

  /** Retained events (for tests and the debug log). */
  get size(): number {
    return this.#events.length;
  }

  #evict(): void {
    let drop = 0;
    while (
      this.#events.length - drop > 1 &&
      (this.#events.length - drop > this.#limits.maxEvents || this.#bytes > this.#limits.maxBytes)
    ) {
      const event = this.#events[drop++];
      if (event === undefined) break;
      this.#bytes -= event.bytes;
      const left = (this.#perStream.get(event.streamId) ?? 1) - 1;
      if (left === 0) this.#perStream.delete(event.streamId);
      else this.#perStream.set(event.streamId, left);
    }
    if (drop > 0) this.#events = this.#events.slice(drop);
  }
}

function eventId(streamId: StreamId, seq: number): EventId {
  return `${streamId}:${String(seq)}`;
}

function parse(id: EventId): { streamId: StreamId; seq: number } | undefined {
  const colon = id.lastIndexOf(':');
  if (colon <= 0) return undefined;
  const digits = id.slice(colon + 1);
  if (!/^\d{1,15}$/.test(digits)) return undefined;
  return { streamId: id.slice(0, colon), seq: Number(digits) };
}
