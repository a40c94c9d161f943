// Serving the MCP server on stdin/stdout, kept beside the other SDK users.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Logger } from 'pino';
import { paramsProblem } from './params.js';
import { StdioTransport } from './stdio-transport.js';

/** Serves `server` on stdin/stdout; resolves when the client goes away (stdin ends). */
export async function serveOnStdio(server: Server, logger: Logger): Promise<void> {
  const transport = new StdioTransport({ checkParams: paramsProblem });
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
  });
  // Refused messages and the SDK's own protocol errors would otherwise vanish without a trace.
  server.onerror = (error) => logger.warn({ err: error }, 'MCP protocol error');
  await server.connect(transport);
  await closed;
}
