// Serving MCP on stdin/stdout, in the era the client opens with (docs/decisions/0001): the SDK
// v2's serveStdio reads the opening message and pins the connection — `initialize` to the
// 2024-11-05 … 2025-11-25 server (SDK v1, server.ts), `server/discover` or a request carrying a
// 2026-07-28 envelope to the 2026 one (modern/server.ts); a client probing with server/discover
// and falling back to initialize gets the 2025 server. Our own framing (stdio-transport.ts) is
// under both.
import type { Server as ModernServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { Runtime } from '../../runtime/runtime.js';
import { createModernServer } from '../../protocol/modern/server.js';
import { createMcpServer, type McpConnection } from '../../protocol/server.js';
import { StdioTransport } from './transport.js';
import { OperationTaskStore } from '../../protocol/tasks.js';

export interface StdioConnection {
  /** Resolves when the client goes away (stdin ends). */
  readonly gone: Promise<void>;
  /** Ends the connection: what its 2025 server started is cancelled (McpConnection.close). */
  close(): Promise<void>;
}

export function serveOnStdio(runtime: Runtime): StdioConnection {
  const { logger } = runtime;
  const transport = new StdioTransport();
  let legacy: McpConnection | undefined;
  const modernTasks = new OperationTaskStore(runtime.engine.operations);
  const handle = serveStdio(
    ({ era }) => {
      if (era === 'modern') return createModernServer(runtime, modernTasks);
      legacy = createMcpServer(runtime);
      // Refused messages and the SDK's own protocol errors would otherwise vanish without a trace.
      legacy.server.onerror = (error) => logger.warn({ err: error }, 'MCP protocol error');
      // The v1 Server speaks the same connect/close and Transport contract serveStdio drives; the
      // v2 type is a class of its own, which no other class's instance can be typed as.
      return legacy.server as unknown as ModernServer;
    },
    {
      // Our framing implements the v1 Transport, which the v2 one accepts as it is.
      transport,
      onerror: (error) => logger.warn({ err: error }, 'MCP protocol error'),
    },
  );
  // serveStdio owns the transport's onclose; the end of the connection is heard beside it.
  const gone = new Promise<void>((resolve) => {
    const served = transport.onclose;
    transport.onclose = () => {
      served?.();
      resolve();
    };
  });
  return {
    gone,
    close: async () => {
      await legacy?.close();
      modernTasks.clear();
      await handle.close();
    },
  };
}
