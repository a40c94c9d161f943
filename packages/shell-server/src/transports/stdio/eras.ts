// Serving MCP on stdin/stdout, in the era the client opens with (docs/decisions/0001). An opening
// `initialize` without a 2026-07-28 envelope claim — what every 2024-11-05 … 2025-11-25 client
// sends — goes straight to the 2025 server (SDK v1, server.ts). Any other opening goes to the SDK
// v2's serveStdio, which pins the connection: `server/discover` or a request carrying a 2026-07-28
// envelope to the 2026 server (modern/server.ts), a client probing with server/discover and
// falling back to initialize to the 2025 one. The SDK v2 (650 kB, about a tenth of a start's CPU)
// is loaded only then. Our own framing (transport.ts) is under both.
import type { Server as ModernServer } from '@modelcontextprotocol/server';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Runtime } from '../../runtime/runtime.js';
import { createMcpServer, type McpConnection } from '../../protocol/server.js';
import { HeldTransport } from './held-transport.js';
import { StdioTransport } from './transport.js';

export interface StdioConnection {
  /** Resolves when the client goes away (stdin ends). */
  readonly gone: Promise<void>;
  /** Ends the connection: what its 2025 server started is cancelled (McpConnection.close). */
  close(): Promise<void>;
}

/** The `_meta` key of a 2026-07-28 request's envelope claim (the SDK v2's PROTOCOL_VERSION_META_KEY). */
const ENVELOPE_CLAIM = 'io.modelcontextprotocol/protocolVersion';

/** Whether `message` is a 2025-era initialize: a request without a 2026-07-28 envelope claim. */
function opensLegacy(message: JSONRPCMessage): boolean {
  if (!('method' in message) || message.method !== 'initialize' || !('id' in message)) return false;
  const meta: unknown = message.params?.['_meta'];
  return typeof meta !== 'object' || meta === null || !(ENVELOPE_CLAIM in meta);
}

export function serveOnStdio(runtime: Runtime): StdioConnection {
  const { logger } = runtime;
  const wire = new HeldTransport(new StdioTransport());
  const onerror = (error: Error) => logger.warn({ err: error }, 'MCP protocol error');
  let legacy: McpConnection | undefined;
  const connectLegacy = () => {
    legacy = createMcpServer(runtime);
    // Refused messages and the SDK's own protocol errors would otherwise vanish without a trace.
    legacy.server.onerror = onerror;
    return legacy;
  };
  let ended = false;
  void wire.closed.then(() => (ended = true));
  const served = (async () => {
    await wire.open();
    const first = await wire.first;
    if (first === undefined || ended) return undefined;
    if (opensLegacy(first)) {
      await connectLegacy().server.connect(wire);
      return undefined;
    }
    const [{ serveStdio }, { createModernServer }, { OperationTaskStore }] = await Promise.all([
      import('@modelcontextprotocol/server/stdio'),
      import('../../protocol/modern/server.js'),
      import('../../protocol/tasks.js'),
    ]);
    const modernTasks = new OperationTaskStore(runtime.engine.operations);
    const handle = serveStdio(
      ({ era }) =>
        era === 'modern'
          ? createModernServer(runtime, modernTasks)
          : // The v1 Server speaks the same connect/close and Transport contract serveStdio
            // drives; the v2 type is a class of its own, which no other class's instance can be.
            (connectLegacy().server as unknown as ModernServer),
      // Our framing implements the v1 Transport, which the v2 one accepts as it is.
      { transport: wire, onerror },
    );
    return async () => {
      modernTasks.clear();
      await handle.close();
    };
  })();
  // Only a bug gets here: said, and the connection ended rather than left unanswered.
  served.catch((error: unknown) => {
    logger.error({ err: error }, 'the stdio connection could not be served');
    void wire.close();
  });
  return {
    gone: wire.closed,
    close: async () => {
      // Reading ends first, as when the client leaves: an opening that never came is no longer
      // awaited (a SIGTERM before the first message would otherwise wait for it forever).
      await wire.close();
      const closeModern = await served.catch(() => undefined);
      await legacy?.close();
      await closeModern?.();
    },
  };
}
