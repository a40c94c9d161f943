// One MCP connection over the runtime: an SDK low-level Server with raw JSON Schema tools (R5.3),
// tools/list, tools/call, progress while a call is open, completion pushes of the calls it
// answered `started` (R2.2), alerts of the operations it started, and tools/list_changed. Each
// client connection gets its own; closing it releases everything it subscribed to and holds, and
// its operations keep only a summary of their results in the engine's history (nobody waits for
// them any more: OperationManager.ownerEnded). Every SDK call of the server lives under this
// folder.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import {
  CallToolRequestSchema,
  GetTaskPayloadRequestSchema,
  ListToolsRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { Runtime } from '../runtime/runtime.js';
import { SERVER_NAME, SERVER_VERSION } from '../package.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { refusal } from '../jsonrpc/refusal.js';
import {
  CLAUDE_CHANNEL,
  LOGGER_NAME,
  pushCompletions,
  transportSessionId,
} from './completion-push.js';
import { callTool, listTools, type Era } from './dispatch.js';
import { personAsker } from './person-asker.js';
import { Piggyback } from './piggyback.js';
import { finishedResult } from '../calls/results.js';
import { OperationTaskStore } from './tasks.js';
import { toCallToolResult } from '../tools/tool.js';

/** What a connection holds for its client (all zero once it has closed). */
export interface ConnectionHeld {
  /** Its operations still running (their alerts and pushes come here). */
  readonly running: number;
  /** Of those, the ones whose completion will be pushed. */
  readonly pushes: number;
  /** Its 2025-11-25 tasks. */
  readonly tasks: number;
  /** Its subscriptions to the engine and the runtime (completions, alerts, tool list changes). */
  readonly subscriptions: number;
}

export interface McpConnection {
  readonly server: Server;
  /** How many operations this connection started are still running. */
  runningOperations(): number;
  /** What it holds now (for the tests and the debug log). */
  held(): ConnectionHeld;
  /**
   * Cancels the operations this connection started that still run and waits for them to end
   * (their processes are killed), then closes the SDK server (and its transport) and releases the
   * connection's subscriptions. Idempotent.
   */
  close(): Promise<void>;
}

/** How long close() waits for the killed operations of a connection to report their end. */
const CANCEL_WAIT_MS = 10_000;

/** Each connection's owner tag on the operations it starts. */
let connections = 0;

/** The SDK v1's side of the shared tools/list and tools/call (dispatch.ts). */
const ERA_2025: Era = {
  logSuffix: '',
  protocolError: (refused) => new McpError(refused.rpcCode ?? RpcCode.Refused, refused.message),
};

/**
 * The SDK's Ajv validator, made when first used: only a person's answer to a question checks
 * against a schema (person-asker.ts), and making it costs every connection about 8 ms of CPU.
 */
function validatorOnFirstUse(): jsonSchemaValidator {
  let made: AjvJsonSchemaValidator | undefined;
  return { getValidator: (schema) => (made ??= new AjvJsonSchemaValidator()).getValidator(schema) };
}

export function createMcpServer(runtime: Runtime): McpConnection {
  const { logger, engine } = runtime;
  const owner = `connection-${String(++connections)}`;
  // SPEC §12: 2025-11-25 tasks, each a view of one of this connection's operations.
  const tasks = new OperationTaskStore(engine.operations);
  const server = new Server(
    { name: SERVER_NAME, version: SERVER_VERSION },
    {
      capabilities: {
        tools: { listChanged: true },
        // Completions of answered calls and livelog alerts are notifications/message.
        logging: {},
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
        // R2.7: Claude Code's research-preview channel, on request (--claude-channel).
        ...(runtime.claudeChannel ? { experimental: { [CLAUDE_CHANNEL]: {} } } : {}),
      },
      instructions: runtime.instructions,
      taskStore: tasks,
      jsonSchemaValidator: validatorOnFirstUse(),
    },
  );
  /** Operations this connection started and that still run: their alerts and pushes come here. */
  const owned = new Set<string>();
  /** Of those, the ones whose call was answered `started`: their completion is pushed. */
  const answeredStarted = new Set<string>();
  /** R2.7: their results, once finished, ride on the next tool result until handed over. */
  const piggyback = new Piggyback();

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: await listTools(runtime, ERA_2025),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { params } = request;
    const taskRequest = params.task;
    // R7.18: questions for the person ride on this call's stream while it is open, later on the
    // session's own.
    let open = true;
    const outcome = await callTool(
      runtime,
      ERA_2025,
      {
        name: params.name,
        arguments: params.arguments,
        progressToken: params._meta?.progressToken,
        signal: extra.signal,
        notify: (notification) => extra.sendNotification(notification),
      },
      (entry) =>
        // SPEC §12: only a tool that runs an operation may be a task (RUNS_AS_TASK).
        taskRequest !== undefined && entry.tool.execution?.taskSupport !== 'optional'
          ? refusal(
              'request',
              `tool "${entry.tool.name}" answers at once and is never a task; call it without "task"`,
              { rpcCode: RpcCode.MethodNotFound },
            )
          : {
              started: (id) => owned.add(id),
              owner,
              pushLater: (id) => answeredStarted.add(id),
              detached: taskRequest !== undefined,
              asker: personAsker(server, () => (open ? extra.requestId : undefined)),
            },
    ).finally(() => (open = false));
    if (taskRequest === undefined) return piggyback.carry(toCallToolResult(outcome));
    // A call refused before any operation started: its task is born completed with the refusal.
    if (outcome.kind !== 'operation') {
      return { task: tasks.settle(toCallToolResult(outcome), taskRequest.ttl) };
    }
    const task = await extra.taskStore?.createTask({
      ...(taskRequest.ttl === undefined ? {} : { ttl: taskRequest.ttl }),
      context: { operationId: outcome.snapshot.id },
    });
    if (task === undefined) throw new McpError(RpcCode.InternalError, 'no task store');
    return { task };
  });

  // tasks/result blocks until the operation ends (the SDK's own polls every pollInterval).
  server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
    const { taskId } = request.params;
    if (!tasks.has(taskId)) throw new McpError(RpcCode.InvalidParams, `no task ${taskId}`);
    const settled = tasks.settledResult(taskId);
    if (settled !== undefined) return related(settled, taskId);
    const [operation] = await engine.operations.await([taskId], undefined, extra.signal);
    if (operation === undefined || operation.status === 'running') {
      throw new McpError(RpcCode.RequestTimeout, `${taskId} is still running`);
    }
    return related(finishedResult(operation), taskId);
  });

  const subscriptions = [
    pushCompletions(server, engine, answeredStarted, logger, piggyback, runtime.claudeChannel),
    engine.operations.onComplete((snapshot) => owned.delete(snapshot.id)),
    // notifications/tasks/status when a task's operation ends (its start is the call's answer).
    engine.operations.onComplete((snapshot) => {
      const task = tasks.taskOf(snapshot);
      if (task === undefined || server.transport === undefined) return;
      server
        .notification({ method: 'notifications/tasks/status', params: task })
        .catch((error: unknown) =>
          logger.warn({ err: error, task: task.taskId }, 'could not send a task status'),
        );
    }),
    // SPEC §3: a livelog tool's alert is pushed at once as a warning naming its operation.
    engine.operations.onAlert((alert) => {
      if (!owned.has(alert.operationId)) return;
      server
        .sendLoggingMessage(
          {
            level: 'warning',
            logger: LOGGER_NAME,
            data: {
              operation_id: alert.operationId,
              tool: alert.tool,
              alert: alert.summary,
              chunk: alert.detail,
            },
          },
          transportSessionId(server),
        )
        .catch((error: unknown) =>
          logger.warn({ err: error, operation: alert.operationId }, 'could not push an alert'),
        );
    }),
    // Hot reload and revealed bundles: the client lists the tools again (not before it connected).
    runtime.onToolsChanged(() => {
      if (server.transport === undefined) return;
      server
        .sendToolListChanged()
        .catch((error: unknown) =>
          logger.warn({ err: error }, 'could not send tools/list_changed'),
        );
    }),
  ];
  let released = false;
  const release = () => {
    for (const unsubscribe of subscriptions.splice(0)) unsubscribe();
    tasks.clear();
    answeredStarted.clear();
    piggyback.clear();
    if (released) return;
    released = true;
    engine.operations.ownerEnded(owner);
    // R7.18: what the person allowed "for this session" ends with it.
    engine.egress?.forget(owner);
    engine.writeGrants.forget(owner);
  };
  // The client going away closes the transport, and with it the server: release then too (what it
  // holds goes, and its operations are summarized as they end). Its operations run on: a stdio
  // client that leaves is followed by the runtime's close, and an HTTP session ends through
  // close() below, which kills them.
  server.onclose = release;
  // An ended session must not leave commands running that nobody will ever await: close() kills
  // what this connection started (other connections' operations are theirs to keep).
  const cancelOwned = async () => {
    const ids = [...owned];
    for (const id of ids) {
      try {
        engine.operations.cancel(id, 'the MCP session that started it ended');
      } catch {
        // Already forgotten: nothing left to kill.
      }
    }
    if (ids.length === 0) return;
    await engine.operations.await(ids, CANCEL_WAIT_MS).catch((error: unknown) => {
      logger.warn({ err: error }, 'could not wait for the cancelled operations');
    });
  };
  let closing: Promise<void> | undefined;
  return {
    server,
    runningOperations: () => owned.size,
    held: () => ({
      running: owned.size,
      pushes: answeredStarted.size,
      tasks: tasks.size,
      subscriptions: subscriptions.length,
    }),
    close: () =>
      (closing ??= (async () => {
        await cancelOwned();
        release();
        // Ended or killed: nothing of them is this connection's any more.
        owned.clear();
        await server.close();
      })()),
  };
}

/** A task's result, saying which task it is (the specification's related-task metadata). */
function related(result: CallToolResult, taskId: string): CallToolResult {
  return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
}
