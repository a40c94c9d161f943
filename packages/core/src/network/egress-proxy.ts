// The egress proxy (R7.17): under `--network proxy` the kernel (Landlock) lets a command connect
// to one TCP port, this proxy's, in the server process; every destination it asks for is decided
// here: the client authenticated (each sandbox its own credentials, so a decision has a
// principal), the host against that principal's rules, its addresses against the special ranges,
// and what goes into a CONNECT tunnel against relaying. Every decision is reported.
//
// No third-party dependency: a proxy is where a parsing difference becomes a bypass, so the
// parsing is the platform's own, each piece used by every Node program. node:http (llhttp) reads
// CONNECT and absolute-form requests with its header-size limit, url.domainToASCII is the WHATWG
// host parser's IDNA (UTS #46), and net.BlockList holds the address ranges.
import { lookup } from 'node:dns/promises';
import {
  createServer,
  STATUS_CODES,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { HostRules } from './host-rules.js';
import { forwardRequest } from './http-forward.js';
import type { RelayMatch } from './relay-guard.js';
import { endThenDestroy, relayTunnel } from './tunnel.js';
import {
  authority,
  hostText,
  openUpstream,
  shown,
  type EgressRefusal,
  type Resolver,
} from './upstream.js';

export type { EgressRefusal } from './upstream.js';

export interface EgressProxyOptions<P> {
  /** Who the Proxy-Authorization (Basic user:password) belongs to; undefined → 407 with Proxy-Authenticate: Basic realm="ahma". */
  readonly authenticate: (user: string, password: string) => P | undefined;
  /** The rules in force for that principal, asked at every request (grants change while it runs). */
  readonly rules: (principal: P) => HostRules;
  /** Every decision, allowed or refused, once per CONNECT or HTTP request. Must not throw into the proxy (catch). */
  readonly onDecision?: (decision: EgressDecision<P>) => void;
  /** Name resolution (default: dns.lookup with { all: true, verbatim: true }); tests inject one. */
  readonly resolve?: (host: string) => Promise<readonly { address: string; family: number }[]>;
  /** Upstream connect timeout (default 30 s). */
  readonly connectTimeoutMs?: number;
}

export interface EgressDecision<P> {
  readonly principal: P | undefined;
  /** 'CONNECT' or the HTTP method. */
  readonly method: string;
  /** Normalized when valid, else as sent. */
  readonly host: string;
  readonly port: number;
  readonly allowed: boolean;
  /** The pattern that allowed or denied it (its text). */
  readonly rule: string | undefined;
  /** The address connected to (allowed) or the special one refused. */
  readonly address: string | undefined;
  readonly refusal: EgressRefusal | undefined;
  /** One sentence for people and models. */
  readonly reason: string;
}

export interface EgressProxy {
  /** 127.0.0.1 */
  readonly host: string;
  readonly port: number;
  /** http://user:password@127.0.0.1:port (user and password URL-encoded). */
  url(user: string, password: string): string;
  /** Stops listening and destroys every open connection and tunnel. */
  close(): Promise<void>;
}

const HOST = '127.0.0.1';
/** Connections beyond this many are closed at once (net.Server maxConnections). */
const MAX_CONNECTIONS = 512;
const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;

const defaultResolve: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/** A refusal as the client gets it: status, the refusal's kind in X-Ahma-Refusal, the reason as the body. */
interface Answer {
  readonly status: number;
  readonly refusal: EgressRefusal;
  readonly reason: string;
}

function refusalHeaders(answer: Answer): OutgoingHttpHeaders {
  const body = `${answer.reason}\n`;
  return {
    'Content-Type': 'text/plain',
    'Content-Length': Buffer.byteLength(body),
    'X-Ahma-Refusal': answer.refusal,
    Connection: 'close',
    ...(answer.refusal === 'auth' ? { 'Proxy-Authenticate': 'Basic realm="ahma"' } : {}),
  };
}

/** The refusal as raw bytes, for a CONNECT's socket or the inside of a tunnel. */
function rawRefusal(answer: Answer): string {
  const head = Object.entries(refusalHeaders(answer))
    .map(([name, value]) => `${name}: ${String(value)}\r\n`)
    .join('');
  return `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}\r\n${head}\r\n${answer.reason}\n`;
}

/** The user and password of a `Basic` Proxy-Authorization, or undefined. */
function basicCredentials(
  header: string | undefined,
): { user: string; password: string } | undefined {
  const match = /^\s*basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (match === null) return undefined;
  const decoded = Buffer.from(match[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** host and port of an authority (`name:443`, `[::1]:8080`); `defaultPort` when it has none. */
function splitAuthority(
  text: string,
  defaultPort: number | undefined,
): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]*\]|[^:[\]]*)(?::(\d{0,5}))?$/.exec(text);
  if (match === null) return undefined;
  const [, host = '', portText] = match;
  const port = portText === undefined || portText === '' ? defaultPort : Number(portText);
  if (host === '' || port === undefined || !(port >= 1 && port <= 65535)) return undefined;
  return { host, port };
}

/** The target of an absolute-form `http://` request, or why there is none. */
function httpTarget(url: string): { host: string; port: number; path: string } | string {
  const absolute = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)([^#]*)/i.exec(url);
  if (absolute === null) {
    return 'this is an HTTP proxy: a request names an absolute http:// URL (or uses CONNECT)';
  }
  const [, scheme = '', authorityText = '', rest = ''] = absolute;
  if (scheme.toLowerCase() !== 'http') {
    return `the proxy forwards http:// requests; for ${shown(scheme)}:// use CONNECT (HTTPS_PROXY)`;
  }
  const target = authorityText.includes('@') ? undefined : splitAuthority(authorityText, 80);
  if (target === undefined) return `"${shown(authorityText)}" is not a host and port`;
  const path = rest === '' ? '/' : rest.startsWith('?') ? `/${rest}` : rest;
  return { ...target, path };
}

/** Starts the proxy on 127.0.0.1 at an ephemeral port. */
export async function startEgressProxy<P>(options: EgressProxyOptions<P>): Promise<EgressProxy> {
  const resolve = options.resolve ?? defaultResolve;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const sockets = new Set<Socket>();
  let closed = false;
  let ownPort = 0;

  const track = (socket: Socket) => {
    if (closed) socket.destroy();
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const report = (decision: EgressDecision<P>) => {
    try {
      options.onDecision?.(decision);
    } catch {
      // The reporter's failure is its own; the proxy goes on deciding.
    }
  };
  /** Reports a refusal of `request` (what the decision is about) as `answer` says. */
  const reportRefusal = (
    request: Pick<EgressDecision<P>, 'principal' | 'method' | 'host' | 'port' | 'rule' | 'address'>,
    answer: Answer,
  ) => report({ ...request, allowed: false, refusal: answer.refusal, reason: answer.reason });
  const principalOf = (req: IncomingMessage): P | undefined => {
    const credentials = basicCredentials(req.headers['proxy-authorization']);
    if (credentials === undefined) return undefined;
    try {
      return options.authenticate(credentials.user, credentials.password);
    } catch {
      return undefined;
    }
  };
  const authRefusal = (req: IncomingMessage): Answer => ({
    status: 407,
    refusal: 'auth',
    reason:
      req.headers['proxy-authorization'] === undefined
        ? 'the proxy needs the credentials of its URL (Proxy-Authorization: Basic)'
        : 'the proxy credentials are not valid',
  });

  /** The decision for one request and, when allowed, the upstream socket. */
  const decide = async (principal: P, method: string, host: string, port: number) => {
    const outcome = await openUpstream({
      host,
      port,
      rules: () => options.rules(principal),
      resolve,
      ownPort,
      connectTimeoutMs,
      track,
    });
    report({
      principal,
      method,
      host: outcome.host,
      port,
      allowed: outcome.ok,
      rule: outcome.rule,
      address: outcome.address,
      refusal: outcome.ok ? undefined : outcome.refusal,
      reason: outcome.reason,
    });
    return outcome;
  };

  const onConnect = async (req: IncomingMessage, client: Socket, head: Buffer) => {
    const refuse = (answer: Answer, principal: P | undefined, host: string, port: number) => {
      reportRefusal(
        { principal, method: 'CONNECT', host, port, rule: undefined, address: undefined },
        answer,
      );
      client.end(rawRefusal(answer));
      endThenDestroy(client);
    };
    const principal = principalOf(req);
    const target = splitAuthority(req.url ?? '', undefined);
    if (principal === undefined) {
      return refuse(authRefusal(req), undefined, target?.host ?? req.url ?? '', target?.port ?? 0);
    }
    if (target === undefined) {
      const reason = `a CONNECT target is host:port, not "${shown(req.url ?? '')}"`;
      return refuse({ status: 400, refusal: 'malformed', reason }, principal, req.url ?? '', 0);
    }
    const outcome = await decide(principal, 'CONNECT', target.host, target.port);
    if (!outcome.ok) {
      client.end(rawRefusal(outcome));
      endThenDestroy(client);
      return;
    }
    const { socket: upstream } = outcome;
    if (client.destroyed || closed) {
      upstream.destroy();
      return;
    }
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    relayTunnel(client, upstream, head, (match: RelayMatch) => {
      const reason = `${match.what} inside the tunnel to ${authority(outcome.host, target.port)} (a relay) was refused`;
      const answer: Answer = { status: 403, refusal: 'relay', reason };
      reportRefusal(
        {
          principal,
          method: 'CONNECT',
          host: outcome.host,
          port: target.port,
          rule: outcome.rule,
          address: outcome.address,
        },
        answer,
      );
      client.end(rawRefusal(answer));
      endThenDestroy(client);
    });
  };

  const onRequest = async (req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? 'GET';
    const answer = (refusal: Answer) => {
      if (res.headersSent) return void res.destroy();
      res.writeHead(refusal.status, refusalHeaders(refusal));
      res.end(`${refusal.reason}\n`);
    };
    const refuse = (refusal: Answer, principal: P | undefined, host: string, port: number) => {
      reportRefusal(
        { principal, method, host, port, rule: undefined, address: undefined },
        refusal,
      );
      answer(refusal);
    };
    const principal = principalOf(req);
    const target = httpTarget(req.url ?? '');
    const host = typeof target === 'string' ? (req.url ?? '') : target.host;
    const port = typeof target === 'string' ? 0 : target.port;
    if (principal === undefined) return refuse(authRefusal(req), undefined, host, port);
    if (typeof target === 'string') {
      return refuse({ status: 400, refusal: 'malformed', reason: target }, principal, host, port);
    }
    const outcome = await decide(principal, method, target.host, target.port);
    if (!outcome.ok) return answer(outcome);
    if (res.destroyed || closed) return void outcome.socket.destroy();
    const hostHeader =
      target.port === 80 ? hostText(outcome.host) : authority(outcome.host, target.port);
    forwardRequest(req, res, outcome.socket, { host: hostHeader, path: target.path }, (reason) =>
      answer({
        status: 502,
        refusal: 'upstream',
        reason: `${authority(outcome.host, target.port)}: ${reason}`,
      }),
    );
  };

  // No request timeout: a forwarded upload may take long; headersTimeout still bounds a slow head.
  const server = createServer({ requestTimeout: 0 });
  server.maxConnections = MAX_CONNECTIONS;
  server.on('connection', track);
  server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const client = socket as Socket;
    // node:http took its own error listener off the socket when it handed it over.
    client.on('error', () => undefined);
    client.setNoDelay(true);
    onConnect(req, client, head).catch(() => client.destroy());
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    onRequest(req, res).catch(() => res.destroy());
  });

  await new Promise<void>((resolveListen, rejectListen) => {
    server.once('error', rejectListen);
    server.listen(0, HOST, () => {
      server.off('error', rejectListen);
      resolveListen();
    });
  });
  ownPort = (server.address() as AddressInfo).port;
  // After listening, a server error (none is expected) must not crash the process.
  server.on('error', () => undefined);

  return {
    host: HOST,
    port: ownPort,
    url: (user, password) =>
      `http://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${HOST}:${ownPort}`,
    close: () => {
      closed = true;
      const stopped = new Promise<void>((resolveClose) => server.close(() => resolveClose()));
      for (const socket of sockets) socket.destroy();
      return stopped;
    },
  };
}
