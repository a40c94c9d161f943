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
import type { ModernEndpoint } from './modern-endpoint.js';
import type { IsolationSettings } from './session/session-backend.js';
import type { LegacySession } from './session/legacy-session.js';
import {
  isInitialize,
  openStreamableSession,
  type StreamableSession,
} from './session/streamable-session.js';
import type { Runtime } from '../../runtime/runtime.js';
import { prefersSse } from './accept.js';
import { collapseToJson } from './collapse.js';
import { clientGone, header, pathOf, readJson, refuse, replyInternalError } from './exchange.js';
import { checkRequest, type GuardPolicy } from './guard.js';
import { peerKey, type SessionTable } from './sessions.js';
import { isVerifiedPeer } from './unix-socket.js';
import { toWebRequest, writeWebResponse } from './web.js';
import { OpsPage } from '../../ops/page.js';
import { RpcCode } from '../../jsonrpc/codes.js';
import { methodOf } from '../../jsonrpc/message-kind.js';
import { refusal, type HttpRefusal } from '../../jsonrpc/refusal.js';

export const MCP_PATH = '/mcp';
export const LEGACY_PATH = '/sse';

/** A request refused by the routes, answered `status` with `rpcCode` (RpcCode.Refused). */
const routeRefusal = (
  status: number,
  message: string,
  rpcCode: number = RpcCode.Refused,
  headers: Readonly<Record<string, string>> = {},
): HttpRefusal => refusal('request', message, { status, rpcCode, headers });

/** What /mcp answers 405 with. */
const ALLOWED_METHODS = { Allow: 'GET, POST, DELETE' };

/** Anything but an initialize POST must name its session (the SDK transport's own words). */
const NO_SESSION_ID = routeRefusal(400, 'Bad Request: Mcp-Session-Id header is required');

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
  /** The operations page at /ops, when this server has one. */
  readonly ops?: OpsPage | undefined;
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
      if (!res.headersSent) replyInternalError(context, res);
      else res.destroy();
    });
  };
}

async function route(context: RouteContext, req: IncomingMessage, res: ServerResponse) {
  // The operations page: the same Host and Origin guard, but a browser cannot send the bearer
  // token, so the page's own one-time link and cookie stand in for it (ops/page.ts). Judged by
  // the path as it will be served (`/mcp/../ops` is /ops, `/ops/../mcp` is not the page's).
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  const ops = OpsPage.owns(path) ? context.ops : undefined;
  // The unix socket's peers were checked to be this server's own uid: no browser, no stranger.
  const refused = isVerifiedPeer(req.socket)
    ? undefined
    : checkRequest(
        req.headers,
        ops === undefined ? context.policy() : { ...context.policy(), token: undefined },
      );
  if (refused !== undefined) {
    context.logger.warn(
      { status: refused.status, rule: refused.rule, method: req.method, path: pathOf(req) },
      'HTTP request refused',
    );
    refuse(context, res, refused);
    return;
  }
  // The Host was checked above; it only makes the URL whole (the SDK reads the path from it).
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
  if (ops !== undefined) return ops.handle(req, res, url);
  if (url.pathname === MCP_PATH) return streamable(context, req, res, url);
  if (url.pathname === LEGACY_PATH) return legacy(context, req, res, url);
  if (OpsPage.owns(url.pathname)) {
    const why = context.isolation === undefined ? 'over TCP' : 'without --session-isolation';
    refuse(context, res, routeRefusal(404, `Not found: the operations page is served ${why} only`));
    return;
  }
  refuse(context, res, routeRefusal(404, `Not found: the MCP endpoint is ${MCP_PATH}`));
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
    refuse(context, res, routeRefusal(404, 'Session not found', RpcCode.SessionNotFound));
    return;
  }
  const existing = known?.session as StreamableSession | undefined;
  if (existing?.forbidden !== undefined) {
    refuse(context, res, routeRefusal(403, existing.forbidden));
    return;
  }

  if (req.method === 'POST') return postMessage(context, req, res, url, existing);
  if (req.method === 'GET' || req.method === 'DELETE') {
    if (existing === undefined) {
      refuse(context, res, NO_SESSION_ID);
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
  refuse(context, res, routeRefusal(405, 'Method not allowed', RpcCode.Refused, ALLOWED_METHODS));
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
      refuse(context, res, NO_SESSION_ID);
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

/** A new Streamable session for an initialize POST; undefined (answered 503) when refused. */
async function openSession(
  context: RouteContext,
  peer: string,
  res: ServerResponse,
): Promise<StreamableSession | undefined> {
  const { sessions } = context;
  const refused = await sessions.reserve(peer);
  if (refused !== undefined) {
    refuse(context, res, refused); // R8.4: 503, the limit named, Retry-After
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
    const refused = await sessions.reserve(peer);
    if (refused !== undefined) {
      refuse(context, res, refused); // R8.4: 503, the limit named, Retry-After
      return;
    }
    let session: LegacySession;
    try {
      // Loaded on the first: the SDK's SSE transport brings an encodings library (550 kB) that
      // only the 2024-11-05 HTTP+SSE transport needs.
      const { openLegacySession } = await import('./session/legacy-session.js');
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
      refuse(context, res, routeRefusal(403, session.forbidden));
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
