// One line of input → a JSON-RPC message, a batch of them, or the error response JSON-RPC 2.0
// prescribes (SPEC §6): -32700 for bytes that are not JSON, -32600 for JSON that is not a JSON-RPC
// message, each with one clear line. The SDK's own ReadBuffer throws on both and nothing is
// answered. Batches (JSON arrays) are part of the 2025-03-26 revision the server agrees to: each
// element is checked like a message of its own.
import {
  ErrorCode,
  JSONRPCErrorResponseSchema,
  JSONRPCNotificationSchema,
  JSONRPCRequestSchema,
  JSONRPCResultResponseSchema,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { describeIssue, type SchemaIssue } from './issues.js';

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

export function errorResponse(id: RequestId | null, code: number, message: string): ErrorResponse {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/** Parses and checks one line (without its newline). */
export function readLine(line: string): Line {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { error: errorResponse(null, ErrorCode.ParseError, `Parse error: ${oneLine(detail)}`) };
  }
  if (!Array.isArray(value)) return checkMessage(value);
  // JSON-RPC 2.0 §6: an empty array is one invalid request, answered with a single error.
  if (value.length === 0) return invalid(null, 'an empty batch');
  return { batch: value.map(checkMessage) };
}

/** Checks one parsed value (a whole line, or an element of a batch) as a JSON-RPC message. */
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
  if (parsed.success) return { message: parsed.data };
  const [issue] = parsed.error.issues;
  return invalid(
    requestId(record),
    issue === undefined ? 'not a JSON-RPC 2.0 message' : describeIssue(issue, record),
  );
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
    error: errorResponse(id, ErrorCode.InvalidRequest, `Invalid Request: ${oneLine(detail)}`),
  };
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= MAX_DETAIL ? flat : `${flat.slice(0, MAX_DETAIL)}…`;
}
