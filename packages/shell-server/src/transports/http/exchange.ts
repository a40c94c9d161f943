// The small parts of every HTTP exchange: the JSON body read within its limit and checked, the
// JSON-RPC error answers the server gives itself (echoed for R8B), and headers read as one string.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { echo, type TrafficEcho } from './echo.js';
import { RpcCode } from '../../jsonrpc/codes.js';
import { refusal, type HttpRefusal } from '../../jsonrpc/refusal.js';
import {
  checkValue,
  decodeText,
  errorResponse,
  parseJson,
  type ErrorResponse,
  type Line,
} from '../../jsonrpc/incoming.js';
import { readBody } from './body.js';

export interface ReplyContext {
  readonly echo?: TrafficEcho | undefined;
}

export interface ReadOptions {
  /**
   * The body goes to a session, whose transport answers a request with wrong protocol params
   * itself (transports/http/session/refusals.ts: on the request's own stream, as Accept asks, in a batch too);
   * else (an initialize, the sessionless 2026-07-28 era) it is answered here.
   */
  readonly inSession?: boolean;
}

/**
 * The request's JSON body; undefined when it was refused (413, 400, or the -32602 of a request
 * that reaches no session) or the client left. It passes the check every transport runs
 * (jsonrpc/incoming.ts, as a stdio line does): bytes that are not UTF-8 or not JSON get -32700, JSON
 * that is not JSON-RPC (an element of a batch included, which refuses the batch: the SDK's HTTP
 * transport takes a batch whole or not at all) or a batch over MAX_BATCH_MESSAGES -32600, 400.
 */
export async function readJson(
  context: ReplyContext & { readonly maxBodyBytes: number },
  req: IncomingMessage,
  res: ServerResponse,
  options: ReadOptions = {},
): Promise<{ value: unknown } | undefined> {
  const body = await readBody(req, context.maxBodyBytes);
  if (body.kind === 'aborted') return undefined;
  if (body.kind === 'too-large') {
    // The rest of the body is drained unread (closing on a client still sending would reset the
    // connection before it reads the answer), and the connection closes after the answer.
    req.resume();
    res.shouldKeepAlive = false;
    refuse(
      context,
      res,
      refusal(
        'request',
        `Payload too large: a request body may hold at most ${String(context.maxBodyBytes)} bytes`,
        { status: 413, rpcCode: RpcCode.Refused, headers: { Connection: 'close' } },
      ),
    );
    return undefined;
  }
  const text = decodeText(body.bytes);
  const parsed = typeof text === 'string' ? parseJson(text) : { error: text };
  if ('error' in parsed) {
    replyError(context, res, 400, parsed.error);
    return undefined;
  }
  const refused = refusalOf(checkValue(parsed.value), options.inSession === true);
  if (refused !== undefined) {
    // A request's own error is its answer (200, as any error answer); a message that is not one,
    // or a batch that cannot be served, is a bad request.
    replyError(context, res, refused.error.code === RpcCode.InvalidParams ? 200 : 400, refused);
    return undefined;
  }
  return { value: parsed.value };
}

/** What the check refused that is answered at once, for the whole body. */
function refusalOf(line: Line, inSession: boolean): ErrorResponse | undefined {
  if ('message' in line) return undefined;
  if ('error' in line) {
    return line.error.error.code === RpcCode.InvalidParams && inSession ? undefined : line.error;
  }
  // In a batch, only what is not JSON-RPC refuses it: wrong params are answered by the session.
  const index = line.batch.findIndex(
    (item) => 'error' in item && item.error.error.code !== RpcCode.InvalidParams,
  );
  const item = line.batch[index];
  if (item === undefined || !('error' in item)) return undefined;
  const detail = item.error.error.message.replace(/^Invalid Request: /, '');
  return errorResponse(
    null,
    RpcCode.InvalidRequest,
    `Invalid Request: message ${String(index + 1)} of the batch: ${detail}`,
  );
}

/**
 * A refusal answered with its status and headers, as a JSON-RPC error without id (the SDK
 * transport answers its own refusals so): its rpcCode, else RpcCode.Refused.
 */
export function refuse(context: ReplyContext, res: ServerResponse, refused: HttpRefusal): void {
  const error = { code: refused.rpcCode ?? RpcCode.Refused, message: refused.message };
  replyError(context, res, refused.status, { jsonrpc: '2.0', error, id: null }, refused.headers);
}

/** A request the server failed to serve (a bug, logged by the caller): 500, Internal error. */
export function replyInternalError(context: ReplyContext, res: ServerResponse): void {
  const error = { code: RpcCode.InternalError, message: 'Internal error' };
  replyError(context, res, 500, { jsonrpc: '2.0', error, id: null });
}

/**
 * A JSON-RPC error response written as it is (its id included, its keys in their order: the R8B
 * echo shows them so), echoed for R8B.
 */
function replyError(
  context: ReplyContext,
  res: ServerResponse,
  status: number,
  body: object,
  headers: Readonly<Record<string, string>> = {},
): void {
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
