// What each HTTP request becomes (R8.1–R8.4, R8A, R8C):
// - every request passes the guard first (Host/Origin, bearer token: guard.ts);
// - `/mcp`: Streamable HTTP. POST without Mcp-Session-Id opens a session when it is an initialize
//   and is refused (400) otherwise; an unknown or ended id gets 404; GET opens or resumes the
//   session's SSE stream, DELETE ends the session;
// - `/sse`: GET without Mcp-Session-Id opens a legacy HTTP+SSE session (R8C.3), whose POSTs come
//   back as `/sse?sessionId=…`; every other request to /sse is handled exactly as on /mcp, so a
//   modern client given the old URL is never answered 405 and pushed onto the old transport (R8C.4);
// - `/mcp` POSTs of the 2026-07-28 era (a `_meta` envelope, server/discover) carry no session:
//   they go to the modern endpoint (transports/http/modern-endpoint.ts); with --session-isolation, which
//   that era cannot have, they are refused as an unsupported version, so clients fall back to 2025;
// - a session that ended because its client changed roots after the scope was locked answers 403
//   to everything (R8D.13).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { echo, type TrafficEcho } from './echo.js';
import type { EventStoreLimits } from './session/event-store.js';
import { methodOf, type ModernEndpoint } from './modern-endpoint.js';
import type { IsolationSettings } from './session/session-backend.js';
import { openLegacySession, type LegacySession } from './session/legacy-session.js';
import {
  isInitialize,
  openStreamableSession,
  type StreamableSession,
} from './session/streamable-session.js';
import type { Runtime } from '../../runtime/runtime.js';
import { prefersSse } from './accept.js';
import { collapseToJson } from './collapse.js';
import { clientGone, header, pathOf, readJson, reply } from './exchange.js';
import { checkRequest, type GuardPolicy } from './guard.js';
import { peerKey, type SessionRefusal, type SessionTable } from './sessions.js';
import { isVerifiedPeer } from './unix-socket.js';
import { toWebRequest, writeWebResponse } from './web.js';

export const MCP_PATH = '/mcp';
export const LEGACY_PATH = '/sse';

/** What the SDK is told the client accepts: both, so it never refuses a POST (R8A). */
const SDK_ACCEPT = 'application/json, text/event-stream';

export interface RouteContext {
  readonly runtime: Runtime;
  readonly logger: Logger;
  readonly sessions: SessionTable;
  /** The guard's policy (its port is known once the server listens). */
  readonly policy: () => GuardPolicy;
  readonly maxBodyBytes: number;
  readonly echo?: TrafficEcho | undefined;
  readonly eventStoreLimits?: EventStoreLimits | undefined;
  /** --session-isolation: every session is served by a process of its own (R8D). */
  readonly isolation?: IsolationSettings | undefined;
  /** The 2026-07-28 era (refused with --session-isolation). */
  readonly modern: ModernEndpoint;
}

/** The node:http request listener. */
export function requestHandler(
  context: RouteContext,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    route(context, req, res).catch((error: unknown) => {
      context.logger.error(
        { err: error, method: req.method, path: pathOf(req) },
        'HTTP request failed',
      );
      if (!res.headersSent) reply(context, res, 500, -32603, 'Internal error');
      else res.destroy();
    });
  };
}

async function route(context: RouteContext, req: IncomingMessage, res: ServerResponse) {
  // The unix socket's peers were checked to be this server's own uid: no browser, no stranger.
  const refusal = isVerifiedPeer(req.socket)
    ? undefined
    : checkRequest(req.headers, context.policy());
  if (refusal !== undefined) {
    context.logger.warn(
      { status: refusal.status, method: req.method, path: pathOf(req) },
      'HTTP request refused',
    );
    reply(context, res, refusal.status, -32000, refusal.message, refusal.headers);
    return;
  }
  // The Host was checked above; it only makes the URL whole (the SDK reads the path from it).
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
  if (url.pathname === MCP_PATH) return streamable(context, req, res, url);
  if (url.pathname === LEGACY_PATH) return legacy(context, req, res, url);
  reply(context, res, 404, -32000, `Not found: the MCP endpoint is ${MCP_PATH}`);
}

async function streamable(
  context: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const { sessions } = context;
  const id = header(req, 'mcp-session-id');
  const known = id === undefined ? undefined : sessions.get(id);
  if (id !== undefined && known?.kind !== 'streamable') {
    reply(context, res, 404, -32001, 'Session not found');
    return;
  }
  const existing = known?.session as StreamableSession | undefined;
  if (existing?.forbidden !== undefined) {
    reply(context, res, 403, -32000, existing.forbidden);
    return;
  }

  if (req.method === 'POST') return postMessage(context, req, res, url, existing);
  if (req.method === 'GET' || req.method === 'DELETE') {
    if (existing === undefined) {
      reply(context, res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      return;
    }
    const response = await existing.handle(toWebRequest(req, url));
    const end = sessions.begin(existing);
    try {
      await writeWebResponse(response, res);
    } finally {
      end();
    }
    return;
  }
  reply(context, res, 405, -32000, 'Method not allowed', { Allow: 'GET, POST, DELETE' });
}

/** A POST: to its session, or opening one when it is an initialize; answered as Accept asks. */
async function postMessage(
  context: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  existing: StreamableSession | undefined,
): Promise<void> {
  const { sessions } = context;
  const parsed = await readJson(context, req, res, { inSession: existing !== undefined });
  if (parsed === undefined) return;
  // Read now: the socket forgets its remote address once it has closed.
  const peer = peerOf(req);
  let session = existing;
  if (session === undefined) {
    if (
      !isInitialize(parsed.value) &&
      (await context.modern.claims(toWebRequest(req, url), parsed.value))
    ) {
      return modernPost(context, req, res, url, parsed.value, peer);
    }
    if (!isInitialize(parsed.value)) {
      reply(context, res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      return;
    }
    session = await openSession(context, peer, res);
    if (session === undefined) return;
  }
  const opening = existing === undefined ? session : undefined;
  // An initialize the SDK refused (a wrong Content-Type, say), or that failed: no session came of
  // it, and its place in the table is given back.
  const abandoned = () => {
    if (opening === undefined || opening.id !== undefined) return;
    sessions.opened('streamable', undefined, peer);
    void opening.close();
  };
  let response: Response;
  try {
    response = await session.handle(toWebRequest(req, url, { accept: SDK_ACCEPT }), parsed.value);
  } finally {
    abandoned();
  }
  const end = sessions.begin(session);
  try {
    const answer = prefersSse(header(req, 'accept'))
      ? response
      : await collapseToJson(response, clientGone(res));
    await writeWebResponse(answer, res);
  } finally {
    end();
  }
}

/** A 2026-07-28 POST: to the modern endpoint, answered as Accept asks (R8A) unless it streams. */
async function modernPost(
  context: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  body: unknown,
  peer: string,
): Promise<void> {
  echo(context.echo, 'in', body);
  // This era has no session: the connection is the request, and its closing before the answer
  // is the client's cancellation (the handler closes the exchange, aborting the call: SPEC §12);
  // a notifications/cancelled POSTed for it is routed to it by the endpoint, by `peer`.
  const gone = clientGone(res);
  const response = await context.modern.handle(
    toWebRequest(req, url, { accept: SDK_ACCEPT }, gone),
    body,
    peer,
  );
  if (gone.aborted) {
    // Nobody is left to answer; what the cancelled exchange returns (499) is not written.
    await response.body?.cancel().catch(() => undefined);
    return;
  }
  // subscriptions/listen is a stream by nature: it is never collapsed.
  const answer =
    prefersSse(header(req, 'accept')) || methodOf(body) === 'subscriptions/listen'
      ? response
      : await collapseToJson(response, gone);
  // R8B: a JSON answer is echoed whole (a stream's messages are not: the era has no session
  // transport to watch them on).
  if (context.echo !== undefined && isJson(answer)) {
    const message = (await answer.clone().json()) as object;
    echo(context.echo, 'error' in message ? 'error' : 'out', message);
  }
  await writeWebResponse(answer, res);
}

const isJson = (response: Response) =>
  response.headers.get('content-type')?.startsWith('application/json') === true;

/**
 * Who `req` comes from, for the per-peer cap (R8.4): `unix` on the unix socket, `loopback` for any
 * local TCP client, else the remote address.
 */
function peerOf(req: IncomingMessage): string {
  return peerKey(req.socket.remoteAddress, isVerifiedPeer(req.socket));
}

/** R8.4: a session refused by a limit: 503, the limit named, and when to try again. */
function refuseSession(context: RouteContext, res: ServerResponse, refusal: SessionRefusal): void {
  reply(context, res, 503, -32000, refusal.message, {
    'Retry-After': String(refusal.retryAfterSeconds),
  });
}

/** A new Streamable session for an initialize POST; undefined (answered 503) when refused. */
async function openSession(
  context: RouteContext,
  peer: string,
  res: ServerResponse,
): Promise<StreamableSession | undefined> {
  const { sessions } = context;
  const refusal = await sessions.reserve(peer);
  if (refusal !== undefined) {
    refuseSession(context, res, refusal);
    return undefined;
  }
  try {
    return await openStreamableSession({
      runtime: context.runtime,
      echo: context.echo,
      ...(context.eventStoreLimits === undefined
        ? {}
        : { eventStoreLimits: context.eventStoreLimits }),
      isolation: context.isolation,
      onInitialized: (session) => sessions.opened('streamable', session, peer),
      onClosed: (session) => sessions.closed(session),
    });
  } catch (error) {
    sessions.opened('streamable', undefined, peer);
    throw error;
  }
}

async function legacy(
  context: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const { sessions } = context;
  if (req.method === 'GET' && header(req, 'mcp-session-id') === undefined) {
    const peer = peerOf(req);
    const refusal = await sessions.reserve(peer);
    if (refusal !== undefined) {
      refuseSession(context, res, refusal);
      return;
    }
    let session: LegacySession;
    try {
      session = await openLegacySession({
        runtime: context.runtime,
        res,
        endpoint: LEGACY_PATH,
        echo: context.echo,
        isolation: context.isolation,
        onClosed: (closed) => sessions.closed(closed),
      });
    } catch (error) {
      sessions.opened('legacy', undefined, peer);
      throw error;
    }
    sessions.opened('legacy', session, peer);
    // Its stream is the session: open until the client goes (perhaps already).
    if (res.destroyed) sessions.closed(session);
    const end = sessions.begin(session);
    res.once('close', end);
    return;
  }
  const id = url.searchParams.get('sessionId');
  const entry = req.method === 'POST' && id !== null ? sessions.get(id) : undefined;
  if (entry?.kind === 'legacy') {
    const parsed = await readJson(context, req, res, { inSession: true });
    if (parsed === undefined) return;
    const session = entry.session as LegacySession;
    if (session.forbidden !== undefined) {
      reply(context, res, 403, -32000, session.forbidden);
      return;
    }
    const end = sessions.begin(session);
    try {
      await session.post(req, res, parsed.value);
    } finally {
      end();
    }
    return;
  }
  return streamable(context, req, res, url);
}
