// R8C: one session of the deprecated HTTP+SSE transport (protocol 2024-11-05), for clients that
// still speak it: `GET /sse` opens the stream, whose first event (`endpoint`) names where to POST
// (`/sse?sessionId=…`); answers and pushes come back on that stream. The SDK's SSEServerTransport
// does the protocol; it has no resumption and no keep-alive, as the old transport had none, and
// writes no event ids, so this file numbers its events (every SSE event has an id, SPEC §6). The session lasts as long as its GET stream: the client leaving ends it, and with it
// the commands it started.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import type { Runtime } from '../../../runtime/runtime.js';
import { echoTraffic, type TrafficEcho } from '../echo.js';
import { serveSession, type IsolationSettings, type SessionBackend } from './session-backend.js';

export interface LegacySessionOptions {
  readonly runtime: Runtime;
  /** The GET request's response: the session's stream. */
  readonly res: ServerResponse;
  /** Where the client is told to POST (the session id is added as `?sessionId=`). */
  readonly endpoint: string;
  readonly onClosed: (session: LegacySession) => void;
  readonly echo?: TrafficEcho | undefined;
  /** --session-isolation: the session is served by a process of its own (R8D). */
  readonly isolation?: IsolationSettings | undefined;
}

export interface LegacySession {
  readonly id: string;
  /** One POSTed message (its JSON already read and parsed); answered 202, the reply streams. */
  post(req: IncomingMessage, res: ServerResponse, parsedBody: unknown): Promise<void>;
  runningOperations(): number;
  /** Set once the session must refuse every request with 403 (R8D.13). */
  readonly forbidden: string | undefined;
  close(): Promise<void>;
}

/** Opens the stream (writes its head and the `endpoint` event) and connects a new connection. */
export async function openLegacySession(options: LegacySessionOptions): Promise<LegacySession> {
  const { runtime } = options;
  numberEvents(options.res);
  const transport = new SSEServerTransport(options.endpoint, options.res);
  // Set once serving starts; the session can be asked to close before that.
  let backend: SessionBackend | undefined = undefined;
  let closing: Promise<void> | undefined;
  const session: LegacySession = {
    id: transport.sessionId,
    post: (req, res, parsedBody) => transport.handlePostMessage(req, res, parsedBody),
    runningOperations: () => backend?.runningOperations() ?? 0,
    get forbidden() {
      return backend?.forbidden;
    },
    close: () =>
      (closing ??= (async () => {
        await backend?.close();
        options.onClosed(session);
      })()),
  };
  // Before it starts, which chains it: the stream closing (the client left) ends the session.
  transport.onclose = () => void session.close();
  backend = await serveSession(transport, runtime, options.isolation, options.echo);
  echoTraffic(transport, options.echo);
  return session;
}

/**
 * Gives every SSE event written to `res` an id, 1, 2, … (the SDK's legacy transport writes each
 * event, `event: …` then its data, in one write of its own).
 */
function numberEvents(res: ServerResponse): void {
  let next = 0;
  const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
  res.write = ((chunk: unknown, ...rest: unknown[]) =>
    write(
      typeof chunk === 'string' && chunk.startsWith('event: ')
        ? `id: ${String(++next)}\n${chunk}`
        : chunk,
      ...rest,
    )) as ServerResponse['write'];
}
