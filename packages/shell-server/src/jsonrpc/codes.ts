// The JSON-RPC error codes the server answers with, named once. The standard ones are JSON-RPC
// 2.0's (§5.1), taken from the SDK so both can never disagree. The two the server defines are in
// the range JSON-RPC leaves to servers (-32000 to -32099), and are the very codes the SDK's own
// Streamable HTTP transport uses for the same cases, so a client sees one code for one cause
// whether the SDK or Ahma answered. The 2026-07-28 era's own codes (an unsupported protocol
// version, a missing client capability) are the SDK v2's (ProtocolErrorCode), used where that era
// is served.
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';

export const RpcCode = {
  /** -32700: bytes that are not UTF-8, or text that is not JSON. */
  ParseError: ErrorCode.ParseError,
  /** -32600: JSON that is not a JSON-RPC message, a batch the server cannot take, a line too long. */
  InvalidRequest: ErrorCode.InvalidRequest,
  /** -32601: a method the server does not serve, or a tool that can never be a task called as one. */
  MethodNotFound: ErrorCode.MethodNotFound,
  /** -32602: a request whose protocol params are wrong, an unknown tool, an unknown task. */
  InvalidParams: ErrorCode.InvalidParams,
  /** -32603: the server failed (a bug or a crashed session process), not the client. */
  InternalError: ErrorCode.InternalError,
  /**
   * -32000: the server refused before any MCP handler ran: the HTTP guard (Host, Origin, token),
   * a route (no such path, a method not allowed, a missing Mcp-Session-Id), a body over the size
   * limit, a session over a limit, a session whose scope was locked, and a stdio server that
   * cannot start. The SDK's transport answers its own refusals (Not Acceptable, a wrong
   * Content-Type) with it. Not the SDK's ErrorCode.ConnectionClosed, which is the same number
   * with a client's meaning.
   */
  Refused: -32000,
  /**
   * -32001: the session a request names is unknown or has ended (HTTP 404): the SDK transport's
   * "Session not found", on which a client opens a new session. The 2025 tasks/result uses the same
   * number for a task still running (the SDK's ErrorCode.RequestTimeout): see RequestTimeout.
   */
  SessionNotFound: -32001,
  /** -32001 too: tasks/result gave up waiting for a task still running (the SDK's own name). */
  RequestTimeout: ErrorCode.RequestTimeout,
} as const;

export type RpcCode = (typeof RpcCode)[keyof typeof RpcCode];
