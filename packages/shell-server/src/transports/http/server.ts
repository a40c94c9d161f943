// The HTTP server of `ahma-shell --mode http` (R8.1): node:http on one address and port, the
// guard and routes in front of the sessions, all over the one runtime of the process. The CLI
// (serve.ts) and the tests start it the same way; close() ends every session (killing the
// commands they started) but leaves the runtime to its owner.
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';
import type { Logger } from 'pino';
import { refusal, RefusalError, type Refusal } from '../../jsonrpc/refusal.js';
import type { TrafficEcho } from './echo.js';
import type { EventStoreLimits } from './session/event-store.js';
import { modernEndpointOnDemand } from './modern-on-demand.js';
import { sessionProcesses, type IsolationSettings } from './session/session-backend.js';
import { DEFAULT_STOP_GRACE_MS } from '../../isolation/process-slot.js';
import { SpareProcess } from '../../isolation/spare.js';
import type { Runtime } from '../../runtime/runtime.js';
import { MAX_BODY_BYTES } from './body.js';
import { isLoopback, isWildcard } from './guard.js';
import { OpsPage } from '../../ops/page.js';
import { linkRecorder } from '../../ops/link-record.js';
import { MCP_PATH, requestHandler } from './routes.js';
import { listenUnixSocket } from './unix-socket.js';
import { DEFAULT_SESSION_LIMITS, SessionTable, type SessionLimits } from './sessions.js';

export interface HttpServerOptions {
  /** The address to bind (127.0.0.1 by default in the CLI). */
  readonly host: string;
  /** 0 = any free port; undefined = no TCP listener (then `socket` is required). */
  readonly port: number | undefined;
  /** --http-socket: the same endpoints on a unix socket, for the server's uid (no token there). */
  readonly socket?: string | undefined;
  /** Required unless `host` is a loopback address; undefined = no authentication on TCP. */
  readonly token: string | undefined;
  /** R8B: with --log-to-stderr, every JSON-RPC message in and out is echoed here. */
  readonly echo?: TrafficEcho | undefined;
  readonly sessionLimits?: SessionLimits;
  readonly maxBodyBytes?: number;
  readonly eventStoreLimits?: EventStoreLimits;
  /** --session-isolation: every session is served by a process of its own (R8D). */
  readonly isolation?: IsolationSettings | undefined;
  /**
   * With isolation: keep the next session's process started ahead (isolation/spare.ts). Default
   * true; tests whose subject is not how a session's process starts turn it off.
   */
  readonly spareProcess?: boolean;
  /** Defaults to the runtime's. */
  readonly logger?: Logger;
}

export interface HttpServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:3000/mcp (http://localhost/mcp on the socket only). */
  readonly url: string;
  /** The TCP port; 0 when there is no TCP listener. */
  readonly port: number;
  /** The unix socket's path, when there is one. */
  readonly socket: string | undefined;
  readonly sessions: SessionTable;
  /** The operations page's unused one-time link; undefined when there is no page. */
  opsLink(): string | undefined;
  /** Stops accepting, ends every session and closes every connection. Idempotent. */
  close(): Promise<void>;
}

/**
 * Why the CLI's authentication settings are refused before anything starts: --http-no-auth beside
 * a token, or off loopback. (Without either, the server makes its own token: serve.ts.)
 */
export function authRefusal(
  host: string,
  token: string | undefined,
  noAuth: boolean,
): Refusal | undefined {
  if (!noAuth) return undefined;
  if (token !== undefined) {
    return refusal(
      'start',
      '--http-no-auth contradicts the token given (--http-token-file or AHMA_HTTP_TOKEN)',
    );
  }
  if (!isLoopback(host)) {
    return refusal(
      'start',
      `--http-no-auth is for loopback only: --http-host ${host} is reachable from other machines`,
    );
  }
  return undefined;
}

/** Why a bind is refused before anything starts; undefined when it may go ahead. */
export function bindRefusal(host: string, token: string | undefined): Refusal | undefined {
  if (token !== undefined || isLoopback(host)) return undefined;
  return refusal(
    'start',
    `--http-host ${host} is reachable from other machines: give a bearer token ` +
      '(--http-token-file FILE or AHMA_HTTP_TOKEN) that every request must carry, or bind 127.0.0.1',
  );
}

export async function startHttpServer(
  runtime: Runtime,
  options: HttpServerOptions,
): Promise<HttpServer> {
  if (options.port !== undefined) {
    const refused = bindRefusal(options.host, options.token);
    if (refused !== undefined) throw new RefusalError(refused);
  } else if (options.socket === undefined) {
    throw new Error('an HTTP server needs a port or a unix socket');
  }
  const logger = options.logger ?? runtime.logger;
  // --session-isolation: the next session's process starts now, before any client asks
  // (isolation/spare.ts).
  const spare =
    options.isolation === undefined || options.spareProcess === false
      ? undefined
      : new SpareProcess({
          command: options.isolation.childCommand,
          env: options.isolation.env,
          logger,
          stopGraceMs: DEFAULT_STOP_GRACE_MS,
        });
  const isolation = options.isolation === undefined ? undefined : { ...options.isolation, spare };
  const sessions = new SessionTable(options.sessionLimits ?? DEFAULT_SESSION_LIMITS, logger, {
    processes: () => sessionProcesses(isolation),
  });
  let port = options.port ?? 0;
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const modern = modernEndpointOnDemand(runtime, {
    maxBodyBytes,
    // Isolation gives every client a process of its own, which a sessionless era cannot have.
    refuse: isolation !== undefined,
  });
  // The operations page at /ops: over TCP only (a browser cannot use the unix socket), and not
  // with --session-isolation (the sessions' commands run in their own processes). Its unused
  // one-time link is kept in the server's private directory (doctor prints it).
  let opsOrigin: string | undefined;
  const recordLink = linkRecorder(runtime.engine.state.serverDir, logger);
  const ops =
    options.port === undefined || isolation !== undefined
      ? undefined
      : new OpsPage(runtime, {
          onLink: () => {
            if (opsOrigin !== undefined && ops !== undefined) recordLink(ops.link(opsOrigin));
          },
        });
  const server = createServer(
    requestHandler({
      runtime,
      logger,
      sessions,
      policy: () => ({ bindHost: options.host, port, token: options.token }),
      maxBodyBytes,
      echo: options.echo,
      eventStoreLimits: options.eventStoreLimits,
      isolation,
      modern,
      ops,
    }),
  );
  let unix: NetServer | undefined;
  try {
    if (options.port !== undefined) {
      await listen(server, options.host, options.port);
      port = (server.address() as AddressInfo).port;
    }
    if (options.socket !== undefined) unix = await listenUnixSocket(server, options.socket, logger);
  } catch (error) {
    server.close();
    ops?.close();
    await sessions.closeAll();
    await spare?.close();
    await modern.close();
    throw error;
  }
  if (ops !== undefined) {
    // A wildcard bind is reached on loopback from this machine's browser.
    opsOrigin = `http://${isWildcard(options.host) ? '127.0.0.1' : urlHost(options.host)}:${String(port)}`;
    recordLink(ops.link(opsOrigin));
  }
  const url =
    options.port === undefined
      ? `http://localhost${MCP_PATH}`
      : `http://${urlHost(options.host)}:${String(port)}${MCP_PATH}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    socket: options.socket,
    sessions,
    opsLink: () => (ops === undefined || opsOrigin === undefined ? undefined : ops.link(opsOrigin)),
    close: () =>
      (closing ??= (async () => {
        // A server that never listened on TCP has nothing to wait for there.
        const closed =
          options.port === undefined
            ? Promise.resolve()
            : new Promise<void>((resolve) => server.close(() => resolve()));
        const unixClosed = new Promise<void>((resolve) =>
          unix === undefined ? resolve() : unix.close(() => resolve()),
        );
        ops?.close();
        await sessions.closeAll();
        await spare?.close();
        await modern.close();
        // Idle keep-alive connections, and any answer still being written, go too.
        server.closeAllConnections();
        await Promise.all([closed, unixClosed]);
      })()),
  };
}

/** Listens on `host`:`port`; rejects with the error of a bind that failed (EADDRINUSE, …). */
export function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** IPv6 addresses are bracketed in a URL. */
function urlHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
