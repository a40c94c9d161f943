// What serves an HTTP session's transport: a connection over the process's runtime (shared mode),
// or, with --session-isolation (R8D), a process of its own on the client's first root
// (mcp/isolated-session.ts). The session files (streamable-session.ts, legacy-session.ts) handle
// the HTTP side the same way for both.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Runtime } from '../../runtime.js';
import type { ChildCommand } from '../../sessions/child.js';
import { createIsolatedSession } from '../isolated-session.js';
import { createMcpServer } from '../server.js';
import { echo, type TrafficEcho } from './echo.js';

/** --session-isolation: what every session process is started from. */
export interface IsolationSettings {
  /** The server's scope, for a client without roots (R8D.9). */
  readonly defaultScope: string;
  /** The server's private state root: no session's scope may hold it or lie in it. */
  readonly privatePaths: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  /** ahma-shell --mode stdio with the server's flags (sessions/child-command.ts). */
  readonly childCommand: ChildCommand;
}

export interface SessionBackend {
  /** Commands this session started that still run (an isolated session's are not counted). */
  runningOperations(): number;
  /** Why later requests are refused with 403, once the client changed its roots (R8D.13). */
  readonly forbidden: string | undefined;
  /** Ends what serves the session: its running commands are killed. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts serving `transport` (do not start it yourself; set its onclose first, which is chained).
 */
export async function serveSession(
  transport: Transport,
  runtime: Runtime,
  isolation: IsolationSettings | undefined,
  traffic: TrafficEcho | undefined,
): Promise<SessionBackend> {
  if (isolation !== undefined) {
    const session = createIsolatedSession({
      upstream: transport,
      ...isolation,
      logger: runtime.logger,
    });
    return {
      runningOperations: () => 0,
      get forbidden() {
        return session.terminated === 'roots_changed'
          ? 'Forbidden: the session ended because the client changed its roots after its sandbox scope was locked'
          : undefined;
      },
      close: () => session.close(),
    };
  }
  const connection = createMcpServer(runtime);
  // Refused requests and the SDK's protocol errors would otherwise vanish without a trace.
  connection.server.onerror = (error) => {
    runtime.logger.warn({ err: error }, 'MCP protocol error');
    echo(traffic, 'error', error.message);
  };
  await connection.server.connect(transport);
  return {
    runningOperations: () => connection.runningOperations(),
    forbidden: undefined,
    close: () => connection.close(),
  };
}
