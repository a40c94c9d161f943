// One 2026-07-28 server over the runtime (docs/decisions/0001): the SDK v2 low-level Server, which
// answers server/discover, checks every request's `_meta` envelope and serves
// subscriptions/listen; the same tools as the 2025 eras (protocol/server.ts), and SEP-2663 tasks.
// The era has no pushes, so a long command's result reaches the client one of two ways: a request
// that opted into the tasks extension gets a task once the inline wait is over; any other keeps
// its call open, with progress heartbeats, until the command ends (SPEC §12).
import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  Server,
  type ServerContext,
  type StandardSchemaV1,
} from '@modelcontextprotocol/server';
import type { Runtime } from '../../runtime/runtime.js';
import { SERVER_NAME, SERVER_VERSION } from '../../package.js';
import { RpcCode } from '../../jsonrpc/codes.js';
import { callTool, listTools, type Era } from '../dispatch.js';
import type { OperationTaskStore } from '../tasks.js';
import { toCallToolResult } from '../../tools/tool.js';
import { forModernEra } from './descriptions.js';
import { asModernTool, taskAsToolResult } from './sdk-types.js';
import {
  TASKS_EXTENSION,
  createTaskResult,
  detailedTask,
  optedIntoTasks,
} from './task-extension.js';

/** The SDK v2's side of the shared tools/list and tools/call (dispatch.ts). */
const ERA_2026: Era = {
  logSuffix: ' (2026-07-28)',
  protocolError: (refused) =>
    new ProtocolError(refused.rpcCode ?? RpcCode.Refused, refused.message),
};

/**
 * A 2026-07-28 server answering from `runtime`, its tasks kept in `tasks`: one per stdio
 * connection, one for all of HTTP (whose requests each get a server of their own).
 */
export function createModernServer(runtime: Runtime, tasks: OperationTaskStore): Server {
  const server = new Server(
    { name: SERVER_NAME, version: SERVER_VERSION },
    {
      capabilities: { tools: { listChanged: true }, extensions: { [TASKS_EXTENSION]: {} } },
      instructions: runtime.modernInstructions,
    },
  );

  // The 2025 eras' descriptors (output schemas with content ids), with this era's guidance.
  server.setRequestHandler('tools/list', async () => ({
    tools: (await listTools(runtime, ERA_2026)).map((tool) => asModernTool(forModernEra(tool))),
  }));

  server.setRequestHandler('tools/call', async (request, context) => {
    const { mcpReq } = context;
    // A call of a tool that runs an operation, from a client that opted into the extension.
    let asTask = false;
    const outcome = await callTool(
      runtime,
      ERA_2026,
      {
        name: request.params.name,
        arguments: request.params.arguments,
        progressToken: mcpReq._meta?.progressToken,
        signal: mcpReq.signal,
        notify: (notification) => mcpReq.notify(notification),
      },
      (entry) => {
        asTask =
          optedIntoTasks(mcpReq.envelope) && entry.tool.execution?.taskSupport === 'optional';
        return { keepOpen: !asTask };
      },
    );
    if (asTask && outcome.kind === 'operation' && outcome.snapshot.status === 'running') {
      const task = await tasks.createTask({ context: { operationId: outcome.snapshot.id } });
      return taskAsToolResult(createTaskResult(task));
    }
    return toCallToolResult(outcome);
  });

  /** The task a tasks/* request names, refused as SEP-2663 says when it may not ask. */
  const taskOf = (params: TaskParams, context: ServerContext) => {
    if (!optedIntoTasks(context.mcpReq.envelope)) {
      throw new MissingRequiredClientCapabilityError({
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    }
    if (!tasks.has(params.taskId)) {
      throw new ProtocolError(RpcCode.InvalidParams, `no task ${params.taskId}`);
    }
    return params.taskId;
  };

  server.setRequestHandler('tasks/get', { params: TASK_PARAMS }, async (params, context) => {
    const task = await detailedTask(tasks, taskOf(params, context));
    if (task === undefined) {
      throw new ProtocolError(RpcCode.InvalidParams, `no task ${params.taskId}`);
    }
    return task;
  });
  // Kills the operation's processes and waits for them, like `cancel`; a task already over is
  // left as it is (the same empty acknowledgement: cancelling is idempotent).
  server.setRequestHandler('tasks/cancel', { params: TASK_PARAMS }, async (params, context) => {
    await tasks.updateTaskStatus(taskOf(params, context), 'cancelled');
    return { resultType: 'complete' };
  });
  // Input for a task that asked for some: Ahma's never do, so there is nothing to take.
  server.setRequestHandler('tasks/update', { params: TASK_PARAMS }, (params, context) => {
    taskOf(params, context);
    return { resultType: 'complete' };
  });
  return server;
}

interface TaskParams {
  readonly taskId: string;
}

/** tasks/*'s params: `taskId`, a string (a Standard Schema, the form the SDK validates with). */
const TASK_PARAMS: StandardSchemaV1<unknown, TaskParams> = {
  '~standard': {
    version: 1,
    vendor: 'ahma',
    validate: (value) =>
      typeof value === 'object' &&
      value !== null &&
      'taskId' in value &&
      typeof value.taskId === 'string'
        ? { value: { taskId: value.taskId } }
        : { issues: [{ message: 'params.taskId must be a string' }] },
  },
};
