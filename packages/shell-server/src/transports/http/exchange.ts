// The small parts of every HTTP exchange: the JSON body read within its limit, the JSON-RPC error
// answers the server gives itself (echoed for R8B), and headers read as one string.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { echo, type TrafficEcho } from '../../mcp/http/echo.js';
import { readBody } from './body.js';

export interface ReplyContext {
  readonly echo?: TrafficEcho | undefined;
}

/** The request's JSON body; undefined when it was refused (413, 400) or the client left. */
export async function readJson(
  context: ReplyContext & { readonly maxBodyBytes: number },
  req: IncomingMessage,
  res: ServerResponse,
): Promise<{ value: unknown } | undefined> {
  const body = await readBody(req, context.maxBodyBytes);
  if (body.kind === 'aborted') return undefined;
  if (body.kind === 'too-large') {
    // The rest of the body is drained unread (closing on a client still sending would reset the
    // connection before it reads the answer), and the connection closes after the answer.
    req.resume();
    res.shouldKeepAlive = false;
    reply(
      context,
      res,
      413,
      -32000,
      `Payload too large: a request body may hold at most ${String(context.maxBodyBytes)} bytes`,
      { Connection: 'close' },
    );
    return undefined;
  }
  try {
    return { value: JSON.parse(body.text) as unknown };
  } catch {
    reply(context, res, 400, -32700, 'Parse error: Invalid JSON');
    return undefined;
  }
}

/** A JSON-RPC error without id, as the SDK transport answers its own refusals. */
export function reply(
  context: ReplyContext,
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  const body = { jsonrpc: '2.0', error: { code, message }, id: null };
  echo(context.echo, 'error', body);
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Aborts when the client goes away before its answer was written. */
export function clientGone(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

export function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

export function pathOf(req: IncomingMessage): string {
  return (req.url ?? '/').split('?')[0] ?? '/';
}
