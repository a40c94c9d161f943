// The check every transport runs (jsonrpc/incoming.ts), on what an HTTP session's transport delivers.
// The HTTP layer refuses a body that is not JSON-RPC before the SDK transport sees it
// (transports/http/exchange.ts); a request whose protocol params are wrong is answered here,
// through the session's transport itself, so its -32602 goes where its answer would have gone: on
// the POST's own stream (as Accept asks), within a batch's answer beside the other elements', on a
// legacy session's SSE stream. The SDK would answer it -32603 with a raw zod dump.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { checkParams } from '../../../jsonrpc/incoming.js';

/**
 * Answers, through `transport`, the messages the check refuses, and hands the others on. Call it
 * once what serves the session has set the transport's onmessage.
 */
export function answerRefusals(transport: Transport): void {
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    // The SDK transport checked the envelope: what is left to check are the request's params.
    const checked = checkParams(message);
    if ('message' in checked) {
      deliver?.(message, extra);
      return;
    }
    const refusal = checked.error;
    transport.onerror?.(new Error(`refused a message: ${refusal.error.message}`));
    // Only a request is refused here, and it has its id to be answered with.
    if (refusal.id === null) return;
    transport
      .send(refusal as JSONRPCMessage, { relatedRequestId: refusal.id })
      .catch((error: unknown) =>
        transport.onerror?.(error instanceof Error ? error : new Error(String(error))),
      );
  };
}
