// A plain HTTP request through the egress proxy (R7.17): sent over the socket already connected to
// the checked address (never a lookup of the name again), with the path and query the client asked
// for, the Host its URL named, and without the hop-by-hop headers, the proxy credentials among
// them, which belong to this hop and must not reach the server. Bodies stream both ways; nothing is
// buffered. The socket carries this one request (Connection: close), so no pool mixes destinations.
import { request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Headers of one hop (RFC 9110 §7.6.1), and the proxy's own. */
const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
];

/** `rawHeaders` (name, value, name, value …) without the hop-by-hop ones and those in `without`. */
function endToEnd(rawHeaders: readonly string[], without: readonly string[] = []): string[] {
  const dropped = new Set([...HOP_BY_HOP, ...without]);
  for (let index = 0; index < rawHeaders.length; index += 2) {
    // A header the Connection header names is of this hop too.
    if (rawHeaders[index]?.toLowerCase() !== 'connection') continue;
    for (const token of (rawHeaders[index + 1] ?? '').split(',')) {
      dropped.add(token.trim().toLowerCase());
    }
  }
  const kept: string[] = [];
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = rawHeaders[index] ?? '';
    if (!dropped.has(name.toLowerCase())) kept.push(name, rawHeaders[index + 1] ?? '');
  }
  return kept;
}

export interface ForwardTarget {
  /** The Host header: the URL's host, with its port unless 80. */
  readonly host: string;
  /** The path and query as the client sent them. */
  readonly path: string;
}

/**
 * Sends `req` to the server at the other end of `socket` and streams the answer into `res`.
 * `fail` answers the client when the server fails before its answer began; afterwards a failure
 * cuts the answer short.
 */
export function forwardRequest(
  req: IncomingMessage,
  res: ServerResponse,
  socket: Socket,
  target: ForwardTarget,
  fail: (reason: string) => void,
): void {
  const outgoing = request({
    method: req.method ?? 'GET',
    path: target.path,
    headers: [...endToEnd(req.rawHeaders, ['host']), 'Host', target.host],
    setHost: false,
    createConnection: () => socket,
  });
  const abandon = (error?: Error) => {
    outgoing.destroy();
    socket.destroy();
    if (error !== undefined && !res.headersSent) fail(`the server failed: ${errorCode(error)}`);
    else res.destroy();
  };

  outgoing.on('error', abandon);
  outgoing.on('response', (answer: IncomingMessage) => {
    answer.on('error', () => res.destroy());
    answer.on('aborted', () => res.destroy());
    try {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.rawHeaders));
    } catch (error) {
      return abandon(error as Error);
    }
    answer.pipe(res);
  });
  req.on('error', () => abandon());
  // The client left before the answer was whole: nothing more to carry.
  res.on('close', () => {
    if (!res.writableFinished) abandon();
  });
  req.pipe(outgoing);
}

function errorCode(error: Error): string {
  return (error as NodeJS.ErrnoException).code ?? error.message;
}
