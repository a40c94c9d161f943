// The 2026-07-28 era over HTTP (docs/decisions/0001): what the SDK v2's `isLegacyRequest` does not
// claim is answered by its `createMcpHandler`, each request by a server of its own over the one
// runtime. The era is sessionless, so its tasks are kept in one store for the whole endpoint (any
// request may get or cancel any task by its id, as `status` and `await` reach any operation of a
// shared runtime), and tools/list_changed goes to the open subscriptions/listen streams.
// A request is cancelled by its stream closing (the Request's signal), or by a notifications/
// cancelled POSTed for it, which the endpoint routes to it itself (modern-cancellation.ts).
// With --session-isolation every client must have a process of its own, which a sessionless era
// cannot give: its requests are then answered "unsupported protocol version", naming the 2025
// versions, and a client negotiating automatically falls back to a 2025 session.
import {
  createMcpHandler,
  isLegacyRequest,
  ProtocolErrorCode,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { Runtime } from '../../runtime/runtime.js';
import { isRequestId, methodOf } from '../../jsonrpc/message-kind.js';
import { createModernServer } from '../../protocol/modern/server.js';
import { OperationTaskStore } from '../../protocol/tasks.js';
import { InFlightRequests, onBodyEnd } from './modern-cancellation.js';

export interface ModernEndpoint {
  /** Whether a POST (its body already read and parsed) is 2026-07-28 traffic. */
  claims(request: Request, body: unknown): Promise<boolean>;
  /**
   * Serves one POST; its Request's signal aborting (the client closed the connection) cancels it.
   * `peer` says who sent it (routes.ts's peerKey): a notifications/cancelled cancels only a request
   * of the same peer and client.
   */
  handle(request: Request, body: unknown, peer: string): Promise<Response>;
  /** Aborts the exchanges in flight and forgets the tasks (their operations end with the runtime). */
  close(): Promise<void>;
}

export interface ModernEndpointOptions {
  readonly maxBodyBytes: number;
  /** Refuse the era (--session-isolation). */
  readonly refuse: boolean;
}

export function createModernEndpoint(
  runtime: Runtime,
  options: ModernEndpointOptions,
): ModernEndpoint {
  const limits = { maxRequestBodySize: options.maxBodyBytes };
  const claims = async (request: Request, body: unknown) =>
    !(await isLegacyRequest(request, body, limits));
  if (options.refuse) {
    return {
      claims,
      handle: (_request, body) => Promise.resolve(isolatedRefusal(body)),
      close: () => Promise.resolve(),
    };
  }
  const { logger } = runtime;
  const tasks = new OperationTaskStore(runtime.engine.operations);
  const handler: McpHttpHandler = createMcpHandler(() => createModernServer(runtime, tasks), {
    // 2025 traffic never gets here: the sessionful transports serve it (transports/http/routes.ts).
    legacy: 'reject',
    ...limits,
    onerror: (error) => logger.warn({ err: error }, 'MCP protocol error (2026-07-28)'),
  });
  const stopListening = runtime.onToolsChanged(() => handler.notify.toolsChanged());
  const inFlight = new InFlightRequests();
  const handle = async (request: Request, body: unknown, peer: string): Promise<Response> => {
    if (methodOf(body) === 'notifications/cancelled') {
      const outcome = inFlight.cancel(peer, body);
      // Answered by the SDK all the same (202): a cancellation of nothing is no error (SPEC §3).
      if (outcome !== 'unknown') logger.debug({ outcome }, 'notifications/cancelled (2026-07-28)');
    }
    const tracked = inFlight.track(peer, body);
    if (tracked === undefined) return handler.fetch(request, { parsedBody: body });
    try {
      const signal = AbortSignal.any([request.signal, tracked.signal]);
      const response = await handler.fetch(new Request(request, { signal }), {
        parsedBody: body,
      });
      // In flight until its answer is written (or dropped): a stream's outlives the fetch.
      return onBodyEnd(response, tracked.release);
    } catch (error) {
      tracked.release();
      throw error;
    }
  };
  return {
    claims,
    handle,
    close: async () => {
      stopListening();
      tasks.clear();
      await handler.close();
    },
  };
}

function isolatedRefusal(body: unknown): Response {
  const id = (body as { id?: unknown } | null)?.id;
  const error = {
    code: ProtocolErrorCode.UnsupportedProtocolVersion,
    message:
      'this server isolates every client in a session of its own (--session-isolation), which the sessionless 2026-07-28 revision cannot have: initialize with a 2025 protocol version',
    data: { supported: [...SUPPORTED_PROTOCOL_VERSIONS] },
  };
  return Response.json({ jsonrpc: '2.0', id: isRequestId(id) ? id : null, error }, { status: 400 });
}
