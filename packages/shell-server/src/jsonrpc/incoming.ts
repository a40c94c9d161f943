// What a client sent → a JSON-RPC message, a batch of them, or the error response JSON-RPC 2.0
// prescribes (SPEC §6), each with one clear line: -32700 for bytes that are not UTF-8 or not JSON,
// -32600 for JSON that is not a JSON-RPC message (or a batch over MAX_BATCH_MESSAGES), -32602 for
// a request whose protocol params are wrong (params.ts). Every transport runs this same check, the
// stdio lines (transports/stdio/transport.ts) and the HTTP bodies (transports/http/exchange.ts,
// transports/http/session/refusals.ts) alike, so a message is refused the same way whichever way
// it came. (Left to the SDK, stdio would answer nothing, HTTP -32700 for JSON that is not
// JSON-RPC, and both -32603 with a raw zod dump for wrong params.) Batches (JSON arrays) are part
// of the 2025-03-26 revision the server agrees to: each element is checked like a message of its
// own. Here the shape of a message only picks the schema that says what is wrong with it; a
// message that passed is routed by its kind with message-kind.ts.
import {
  JSONRPCErrorResponseSchema,
  JSONRPCNotificationSchema,
  JSONRPCRequestSchema,
  JSONRPCResultResponseSchema,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { RpcCode } from './codes.js';
import { describeIssue, type SchemaIssue } from './issues.js';
import { paramsProblem } from './params.js';

/** A JSON-RPC error response; `id` is null when the request's id cannot be known (JSON-RPC 2.0 §5). */
export interface ErrorResponse {
  readonly jsonrpc: '2.0';
  readonly id: RequestId | null;
  readonly error: { readonly code: number; readonly message: string };
}

export type Incoming = { readonly message: JSONRPCMessage } | { readonly error: ErrorResponse };

/** A line: one message (or its error), or a batch whose elements are each a message or an error. */
export type Line = Incoming | { readonly batch: readonly Incoming[] };

/** What the envelope schemas share, for choosing one by the message's shape. */
interface EnvelopeSchema {
  safeParse(
    value: unknown,
  ):
    | { readonly success: true; readonly data: JSONRPCMessage }
    | { readonly success: false; readonly error: { readonly issues: readonly SchemaIssue[] } };
}

/** Error messages quote some of the input: keep them one short line. */
const MAX_DETAIL = 200;

/**
 * The most messages one batch may hold, on every transport: the MCP SDK's bound on an HTTP POST
 * (whose transport refuses longer batches itself), kept for stdio too so both answer alike.
 */
export const MAX_BATCH_MESSAGES = 100;

/** Fatal: bytes that are not UTF-8 are refused, never replaced by U+FFFD (a command runs as sent). */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

export function errorResponse(id: RequestId | null, code: number, message: string): ErrorResponse {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/**
 * The text of a message's bytes (a stdio line, an HTTP body), or the -32700 refusing them when
 * they are not UTF-8: a replaced byte would change what the client asked for (a command's text).
 */
export function decodeText(bytes: Uint8Array): string | ErrorResponse {
  try {
    return UTF8.decode(bytes);
  } catch {
    return errorResponse(null, RpcCode.ParseError, 'Parse error: the message is not valid UTF-8');
  }
}

/** Parses and checks one line (without its newline). */
export function readLine(line: string): Line {
  const parsed = parseJson(line);
  return 'error' in parsed ? parsed : checkValue(parsed.value);
}

/** The JSON value of a text, or the -32700 refusing it. */
export function parseJson(
  text: string,
): { readonly value: unknown } | { readonly error: ErrorResponse } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { error: errorResponse(null, RpcCode.ParseError, `Parse error: ${oneLine(detail)}`) };
  }
}

/** Checks a parsed line or body: one message, or a batch whose elements are each checked. */
export function checkValue(value: unknown): Line {
  if (!Array.isArray(value)) return checkMessage(value);
  // JSON-RPC 2.0 §6: an empty array is one invalid request, answered with a single error.
  if (value.length === 0) return invalid(null, 'an empty batch');
  if (value.length > MAX_BATCH_MESSAGES) {
    return invalid(
      null,
      `a batch may hold at most ${String(MAX_BATCH_MESSAGES)} messages, this one holds ${String(value.length)}`,
    );
  }
  return { batch: value.map(checkMessage) };
}

/**
 * Checks one parsed value (a whole line or body, or an element of a batch) as a JSON-RPC message,
 * and a request's protocol params.
 */
function checkMessage(value: unknown): Incoming {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return invalid(null, 'a message must be a JSON object');
  }
  const record = value as Record<string, unknown>;
  const schema = envelopeOf(record);
  if (schema === undefined) {
    return invalid(
      null,
      'neither a request, a notification nor a response: no "method", "result" or "error"',
    );
  }
  const parsed = schema.safeParse(record);
  if (parsed.success) return checkParams(parsed.data);
  const [issue] = parsed.error.issues;
  return invalid(
    requestId(record),
    issue === undefined ? 'not a JSON-RPC 2.0 message' : describeIssue(issue, record),
  );
}

/**
 * A valid message: a request whose protocol params are wrong gets -32602 naming the field. The
 * HTTP sessions run this on what their SDK transport delivers, whose envelope it checked already
 * (transports/http/session/refusals.ts).
 */
export function checkParams(message: JSONRPCMessage): Incoming {
  if (!('method' in message && 'id' in message)) return { message };
  const problem = paramsProblem(message) ?? loneSurrogate(message.params, 'params');
  return problem === undefined
    ? { message }
    : { error: errorResponse(message.id, RpcCode.InvalidParams, problem) };
}

/** A UTF-16 surrogate without its pair: valid JSON (`"\ud800"`), but no text UTF-8 can carry. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Where a string (a key or a value) of `value` holds a lone surrogate: passed to a command it
 * would become U+FFFD, and the command would not run exactly as sent.
 */
function loneSurrogate(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') {
    return LONE_SURROGATE.test(value)
      ? `Invalid params: ${path} holds a lone UTF-16 surrogate (an escape such as \\ud800 without its pair), which no command can be given as sent`
      : undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, item] of Object.entries(value)) {
    const at = Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`;
    if (LONE_SURROGATE.test(key)) return loneSurrogate(key, at);
    const found = loneSurrogate(item, at);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The schema a message of this shape must satisfy. */
function envelopeOf(record: Record<string, unknown>): EnvelopeSchema | undefined {
  if ('method' in record) return 'id' in record ? JSONRPCRequestSchema : JSONRPCNotificationSchema;
  if ('error' in record) return JSONRPCErrorResponseSchema;
  if ('result' in record) return JSONRPCResultResponseSchema;
  return undefined;
}

/**
 * The id to answer with: a request's own, when it is a valid id. Responses (no "method") carry the
 * id of one of the server's requests, which the client would mistake for one of its own: null.
 */
function requestId(record: Record<string, unknown>): RequestId | null {
  if (!('method' in record)) return null;
  const id = record['id'];
  if (typeof id === 'string' || Number.isSafeInteger(id)) return id as RequestId;
  return null;
}

function invalid(id: RequestId | null, detail: string): Incoming {
  return {
    error: errorResponse(id, RpcCode.InvalidRequest, `Invalid Request: ${oneLine(detail)}`),
  };
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= MAX_DETAIL ? flat : `${flat.slice(0, MAX_DETAIL)}…`;
}
