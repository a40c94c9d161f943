// Which kind of JSON-RPC message a value is, read from its shape alone. The rule: a `method` with
// an id is a request, a `method` without one a notification, an id with a `result` or an `error`
// a response; an id is a string or a number (JSON-RPC 2.0 §4). Anything else is none of them,
// and so is an error response without an id: it answers no request, so there is no one to route
// it to. Nothing is validated (incoming.ts does that) and nothing is copied: whoever routes a
// message by its kind passes on the very object it was given.
import type {
  JSONRPCErrorResponse,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResultResponse,
  ProgressToken,
  RequestId,
} from '@modelcontextprotocol/sdk/types.js';

/** An answer to a request: a result or an error, carrying the id of the request it answers. */
export type ResponseMessage = (JSONRPCResultResponse | JSONRPCErrorResponse) & {
  readonly id: RequestId;
};

export type MessageKind =
  | { readonly kind: 'request'; readonly message: JSONRPCRequest }
  | { readonly kind: 'notification'; readonly message: JSONRPCNotification }
  | { readonly kind: 'response'; readonly message: ResponseMessage };

/** The JSON-RPC method of a message (a request or notification body), if it names one. */
export function methodOf(body: unknown): string | undefined {
  const method = (body as { method?: unknown } | null)?.method;
  return typeof method === 'string' ? method : undefined;
}

/** A value JSON-RPC accepts as a request id: a string or a number. */
export function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || typeof value === 'number';
}

/** The kind of a JSON-RPC message, or undefined for a value that is none (see the header). */
export function classify(value: unknown): MessageKind | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const fields = value as Record<string, unknown>;
  const hasId = isRequestId(fields['id']);
  if (typeof fields['method'] === 'string') {
    return hasId
      ? { kind: 'request', message: value as JSONRPCRequest }
      : { kind: 'notification', message: value as JSONRPCNotification };
  }
  if (hasId && ('result' in fields || 'error' in fields)) {
    return { kind: 'response', message: value as ResponseMessage };
  }
  return undefined;
}

/** The progress token a request asks its progress to carry (`params._meta.progressToken`). */
export function progressTokenOf(request: JSONRPCRequest): ProgressToken | undefined {
  const meta = (request.params as { _meta?: { progressToken?: unknown } } | undefined)?._meta;
  const token = meta?.progressToken;
  return isRequestId(token) ? token : undefined;
}

/** The token a notifications/progress names (`params.progressToken`). */
export function progressOf(notification: JSONRPCNotification): ProgressToken | undefined {
  const token = (notification.params as { progressToken?: unknown } | undefined)?.progressToken;
  return isRequestId(token) ? token : undefined;
}

/** The request a notifications/cancelled names (`params.requestId`); undefined for any other. */
export function cancelledRequestId(notification: JSONRPCNotification): RequestId | undefined {
  if (notification.method !== 'notifications/cancelled') return undefined;
  const id = (notification.params as { requestId?: unknown } | undefined)?.requestId;
  return isRequestId(id) ? id : undefined;
}
