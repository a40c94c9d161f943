// The message of a JSON-RPC error as it goes on the wire. The SDK's McpError builds its message as
// `MCP error <code>: <text>` and its Protocol sends that message as it is; the receiving SDK client
// wraps it in a new McpError, which adds the prefix again ("MCP error -32602: MCP error -32602:
// unknown tool"). The wire carries the text alone, so every client shows the prefix at most once.
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** `message` without the `MCP error <code>: ` prefix(es) McpError put in front of it. */
export function withoutMcpErrorPrefix(code: number, message: string): string {
  const prefix = `MCP error ${String(code)}: `;
  let text = message;
  while (text.startsWith(prefix)) text = text.slice(prefix.length);
  return text;
}

/** An outgoing message with its error text, if it is an error response, unprefixed. */
export function onTheWire<T extends JSONRPCMessage>(message: T): T {
  if (!('error' in message)) return message;
  const { error } = message;
  const text = withoutMcpErrorPrefix(error.code, error.message);
  return text === error.message ? message : { ...message, error: { ...error, message: text } };
}
