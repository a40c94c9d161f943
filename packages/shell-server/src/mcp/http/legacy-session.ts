// R8C: one session of the deprecated HTTP+SSE transport (protocol 2024-11-05), for clients that
// still speak it: `GET /sse` opens the stream, whose first event (`endpoint`) names where to POST
// (`/sse?sessionId=…`); answers and pushes come back on that stream. The SDK's SSEServerTransport
// does the protocol; it has no event ids, no resumption and no keep-alive, as the old transport
// had none. The session lasts as long as its GET stream: the client leaving ends it, and with it
// the commands it started.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import type { Runtime } from '../../runtime.js';
import { createMcpServer } from '../server.js';
import { echo, echoTraffic, type TrafficEcho } from './echo.js';

export interface LegacySessionOptions {
  readonly runtime: Runtime;
  /** The GET request's response: the session's stream. */
  readonly res: ServerResponse;
  /** Where the client is told to POST (the session id is added as `?sessionId=`). */
  readonly endpoint: string;
  readonly onClosed: (session: LegacySession) => void;
  readonly echo?: TrafficEcho | undefined;
}

export interface LegacySession {
  readonly id: string;
  /** One POSTed message (its JSON already read and parsed); answered 202, the reply streams. */
  post(req: IncomingMessage, res: ServerResponse, parsedBody: unknown): Promise<void>;
  runningOperations(): number;
  close(): Promise<void>;
}

/** Opens the stream (writes its head and the `endpoint` event) and connects a new connection. */
export async function openLegacySession(options: LegacySessionOptions): Promise<LegacySession> {
  const { runtime } = options;
  const transport = new SSEServerTransport(options.endpoint, options.res);
  const connection = createMcpServer(runtime);
  let closing: Promise<void> | undefined;
  const session: LegacySession = {
    id: transport.sessionId,
    post: (req, res, parsedBody) => transport.handlePostMessage(req, res, parsedBody),
    runningOperations: () => connection.runningOperations(),
    close: () =>
      (closing ??= (async () => {
        await connection.close();
        options.onClosed(session);
      })()),
  };
  // Before connect, which chains it: the stream closing (the client left) ends the session.
  transport.onclose = () => void session.close();
  connection.server.onerror = (error) => {
    runtime.logger.warn({ err: error }, 'MCP protocol error');
    echo(options.echo, 'error', error.message);
  };
  await connection.server.connect(transport);
  echoTraffic(transport, options.echo);
  return session;
}
