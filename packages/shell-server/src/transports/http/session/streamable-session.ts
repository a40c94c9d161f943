// One Streamable HTTP session (R8.1–R8.4): the SDK's web-standard transport with our event store,
// connected to its own MCP connection over the process's runtime. The HTTP layer hands it web
// Requests and writes the Responses it returns; it never sees node:http.
//
// - The transport always streams (no enableJsonResponse): the HTTP layer collapses an answer into
//   JSON for a client that wanted JSON (transports/http/collapse.ts), since the SDK's flag is one
//   per transport and a session's requests differ.
// - Every SSE event has an id from the event store; a GET with Last-Event-ID replays its stream.
// - A GET that opens the session's stream also gets the GET-stream messages no open stream
//   received (event-store.ts: missedCursor), so no completion push is lost while none was open.
// - The session ends by DELETE or close(); either way its connection closes, which kills the
//   commands it started that still run, before DELETE is answered, and releases what it held (its
//   subscriptions, tasks, pending pushes); its event store is emptied (R8.4: an ended session
//   keeps no memory of its own; held() shows what it holds).
// - With --session-isolation a process of its own serves it instead of a connection over the
//   runtime (session-backend.ts).
import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Runtime } from '../../../runtime/runtime.js';
import { echoTraffic, type TrafficEcho } from '../echo.js';
import {
  DEFAULT_EVENT_STORE_LIMITS,
  SessionEventStore,
  STANDALONE_STREAM_ID,
  type EventStoreLimits,
} from './event-store.js';
import type { ConnectionHeld } from '../../../protocol/server.js';
import { serveSession, type IsolationSettings, type SessionBackend } from './session-backend.js';

export interface StreamableSessionOptions {
  readonly runtime: Runtime;
  /** Called once the transport has given the session its id (inside the initialize POST). */
  readonly onInitialized: (session: StreamableSession) => void;
  /** Called once when the session has ended, whatever ended it. */
  readonly onClosed: (session: StreamableSession) => void;
  /** R8B: where every JSON-RPC message of the session is echoed (--log-to-stderr). */
  readonly echo?: TrafficEcho | undefined;
  readonly eventStoreLimits?: EventStoreLimits;
  /** --session-isolation: the session is served by a process of its own (R8D). */
  readonly isolation?: IsolationSettings | undefined;
}

export interface StreamableSession {
  /** The Mcp-Session-Id, once initialize has been handled. */
  readonly id: string | undefined;
  /** Answers one request of this session (`parsedBody`: the POST's JSON, already read). */
  handle(request: Request, parsedBody?: unknown): Promise<Response>;
  /** Commands this session started that still run (an idle session with some is kept). */
  runningOperations(): number;
  /** Set once the session must refuse every request with 403 (R8D.13). */
  readonly forbidden: string | undefined;
  /** What the session holds now (the tests' and the debug log's view; all zero once ended). */
  held(): SessionHeld;
  /** Ends the session: kills its running commands, closes its streams. Idempotent. */
  close(): Promise<void>;
}

export interface SessionHeld extends Partial<ConnectionHeld> {
  /** Events in its event store, and their bytes. */
  readonly events: number;
  readonly eventBytes: number;
}

/** True when a POST body (one message or a batch) holds an initialize request. */
export function isInitialize(body: unknown): boolean {
  return Array.isArray(body) ? body.some(isInitializeRequest) : isInitializeRequest(body);
}

export async function openStreamableSession(
  options: StreamableSessionOptions,
): Promise<StreamableSession> {
  const { runtime } = options;
  const store = new SessionEventStore(options.eventStoreLimits ?? DEFAULT_EVENT_STORE_LIMITS);
  // Set once serving starts; the session can be asked to close before that.
  let backend: SessionBackend | undefined = undefined;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await backend?.close();
      store.clear();
      options.onClosed(session);
    })());
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    eventStore: store,
    onsessioninitialized: () => options.onInitialized(session),
    // DELETE: awaited before the SDK answers 200, so the answer means the commands are dead.
    onsessionclosed: () => close(),
  });
  // Before connect, which chains it: the transport closing (DELETE, close()) ends the session.
  transport.onclose = () => void close();

  /** GET: resumes (Last-Event-ID), or opens the session's stream with what it missed. */
  const get = async (request: Request): Promise<Response> => {
    let lastEventId = request.headers.get('last-event-id') ?? undefined;
    if (lastEventId === undefined) {
      lastEventId = store.missedCursor();
      if (lastEventId !== undefined) {
        const headers = new Headers(request.headers);
        headers.set('last-event-id', lastEventId);
        request = new Request(request, { headers });
      }
    }
    const standalone =
      lastEventId === undefined || store.streamOf(lastEventId) === STANDALONE_STREAM_ID;
    const response = await transport.handleRequest(request);
    if (!standalone || response.status !== 200 || response.body === null) return response;
    store.attach();
    return new Response(
      whenDone(response.body, () => store.detach()),
      {
        status: response.status,
        headers: response.headers,
      },
    );
  };

  const session: StreamableSession = {
    get id() {
      return transport.sessionId;
    },
    handle: (request, parsedBody) =>
      request.method === 'GET'
        ? get(request)
        : transport.handleRequest(request, parsedBody === undefined ? {} : { parsedBody }),
    runningOperations: () => backend?.runningOperations() ?? 0,
    held: () => ({ events: store.size, eventBytes: store.bytes, ...backend?.held() }),
    get forbidden() {
      return backend?.forbidden;
    },
    close,
  };
  backend = await serveSession(transport, runtime, options.isolation, options.echo);
  echoTraffic(transport, options.echo);
  return session;
}

/** `body` passed through; `done` is called once when it ends, fails or is cancelled. */
function whenDone(body: ReadableStream<Uint8Array>, done: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let ended = false;
  const end = () => {
    if (!ended) done();
    ended = true;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done: finished } = await reader.read();
        if (finished) {
          end();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        end();
        controller.error(error);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
}
