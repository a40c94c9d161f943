// What serves an HTTP session's transport: a connection over the process's runtime (shared mode),
// or, with --session-isolation (R8D), a process of its own on the client's first root
// (isolation/isolated-session.ts). The session files (streamable-session.ts, legacy-session.ts) handle
// the HTTP side the same way for both.
//
// Both say truthfully how many of the session's commands still run (R8.4: a session with a running
// command is neither swept as idle nor ended to make room, or the command would be killed). Shared
// mode counts the operations its connection started; an isolated session's run in its process, and
// its backend learns them from the session's traffic (session-activity.ts).
import type { Environment } from '@ahma/core';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Runtime } from '../../../runtime/runtime.js';
import type { ChildCommand } from '../../../isolation/child.js';
import type { SpareProcess } from '../../../isolation/spare.js';
import type { RootPolicy } from '../../../isolation/root-scope.js';
import {
  createIsolatedSession,
  type IsolatedSession,
} from '../../../isolation/isolated-session.js';
import { initializeAnswer } from '../../../protocol/initialize-answer.js';
import { createMcpServer, type ConnectionHeld } from '../../../protocol/server.js';
import { echo, type TrafficEcho } from '../echo.js';
import { answerRefusals } from './refusals.js';
import { observeActivity } from './session-activity.js';

/** --session-isolation: what every session process is started from. */
export interface IsolationSettings {
  /** The server's scope, for a client without roots (R8D.9). */
  readonly defaultScope: string;
  /** What a client's root is checked against (allowed roots, private state, …). */
  readonly roots: RootPolicy;
  readonly env: Environment;
  /** ahma-shell --mode stdio with the server's flags (isolation/child-command.ts). */
  readonly childCommand: ChildCommand;
  /** The server's session process started ahead (isolation/spare.ts); the HTTP server makes it. */
  readonly spare?: SpareProcess | undefined;
}

export interface SessionBackend {
  /** Commands this session started that still run, and its calls not answered yet (isolated). */
  runningOperations(): number;
  /** What its connection holds (shared mode; undefined for an isolated session's process). */
  held(): ConnectionHeld | undefined;
  /** Why later requests are refused with 403, once the client changed its roots (R8D.13). */
  readonly forbidden: string | undefined;
  /** Ends what serves the session: its running commands are killed. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts serving `transport` (do not start it yourself; set its onclose first, which is chained).
 * A request whose protocol params are wrong is answered -32602 on it (refusals.ts).
 */
export async function serveSession(
  transport: Transport,
  runtime: Runtime,
  isolation: IsolationSettings | undefined,
  traffic: TrafficEcho | undefined,
): Promise<SessionBackend> {
  if (isolation !== undefined) {
    let session: IsolatedSession | undefined = undefined;
    const activity = observeActivity(transport, { pid: () => session?.childPid });
    session = createIsolatedSession({
      upstream: activity.transport,
      ...isolation,
      // The session's process runs with this server's flags: this server answers as it would.
      answerInitialize: (request) => initializeAnswer(runtime, request),
      logger: runtime.logger,
    });
    const isolated = session;
    // Wrong protocol params are answered here, as in shared mode (its process would answer them
    // the same way: the check is every transport's).
    answerRefusals(transport);
    // For the memory budget of the session processes (transports/http/sessions.ts).
    const sessionProcess: SessionProcess = {
      get sessionId() {
        return transport.sessionId;
      },
      get pid() {
        return isolated.childPid;
      },
      get live() {
        return isolated.terminated === undefined;
      },
    };
    const processes = liveProcesses.get(isolation) ?? new Set<SessionProcess>();
    liveProcesses.set(isolation, processes);
    processes.add(sessionProcess);
    let closing: Promise<void> | undefined;
    return {
      // A session that ended by itself has no process, and so no command, left.
      runningOperations: () =>
        isolated.terminated === undefined ? activity.runningOperations() : 0,
      held: () => undefined,
      get forbidden() {
        return isolated.terminated === 'roots_changed'
          ? 'Forbidden: the session ended because the client changed its roots after its sandbox scope was locked'
          : undefined;
      },
      close: () =>
        (closing ??= (async () => {
          activity.close();
          await isolated.close();
          processes.delete(sessionProcess);
        })()),
    };
  }
  const connection = createMcpServer(runtime);
  // Refused requests and the SDK's protocol errors would otherwise vanish without a trace.
  connection.server.onerror = (error) => {
    runtime.logger.warn({ err: error }, 'MCP protocol error');
    echo(traffic, 'error', error.message);
  };
  await connection.server.connect(transport);
  answerRefusals(transport);
  return {
    runningOperations: () => connection.runningOperations(),
    held: () => connection.held(),
    forbidden: undefined,
    close: () => connection.close(),
  };
}

/** An isolated session's process, for the memory budget of the session processes (R8.4). */
export interface SessionProcess {
  /** The id of the session it serves, once it has one. */
  readonly sessionId: string | undefined;
  /** Its pid; undefined between two processes. */
  readonly pid: number | undefined;
  /** False once the session ended by itself: it has no process any more. */
  readonly live: boolean;
}

/** The isolated sessions of each server (its IsolationSettings) whose backend is not closed. */
const liveProcesses = new WeakMap<IsolationSettings, Set<SessionProcess>>();

/**
 * The processes of the isolated sessions served with `isolation` (a server's), starting or live;
 * a session's leaves the list once its close() has stopped it.
 */
export function sessionProcesses(isolation: IsolationSettings | undefined): SessionProcess[] {
  return isolation === undefined ? [] : [...(liveProcesses.get(isolation) ?? [])];
}
