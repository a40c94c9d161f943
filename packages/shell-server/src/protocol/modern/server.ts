// One 2026-07-28 server over the runtime (docs/decisions/0001): the SDK v2 low-level Server, which
// answers server/discover, checks every request's `_meta` envelope and serves
// subscriptions/listen; the same tools as the 2025 eras (protocol/server.ts), and SEP-2663 tasks.
// The era has no pushes, so a long command's result reaches the client one of two ways: a request
// that opted into the tasks extension gets a task once the inline wait is over; any other keeps
// its call open, with progress heartbeats, until the command ends (SPEC §12).
import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
  type ServerContext,
  type StandardSchemaV1,
  type Tool,
} from '@modelcontextprotocol/server';
import type { Runtime } from '../../runtime/runtime.js';
import { SERVER_NAME, SERVER_VERSION } from '../../package.js';
import { progressReporter } from '../progress.js';
import { withSchemaId } from '../schema-ids.js';
import type { OperationTaskStore } from '../tasks.js';
import { toCallToolResult } from '../../tools/tool.js';
import { forModernEra } from './descriptions.js';
import {
  TASKS_EXTENSION,
  createTaskResult,
  detailedTask,
  optedIntoTasks,
  type CreateTaskResult,
} from './task-extension.js';

/**
 * A 2026-07-28 server answering from `runtime`, its tasks kept in `tasks`: one per stdio
 * connection, one for all of HTTP (whose requests each get a server of their own).
 */
export function createModernServer(runtime: Runtime, tasks: OperationTaskStore): Server {
  const { logger } = runtime;
  const server = new Server(
    { name: SERVER_NAME, version: SERVER_VERSION },
    {
      capabilities: { tools: { listChanged: true }, extensions: { [TASKS_EXTENSION]: {} } },
      instructions: runtime.modernInstructions,
    },
  );

  server.setRequestHandler('tools/list', async () => {
    await runtime.remotesListed(); // a remote's first connection, briefly (SPEC §10)
    return {
      // Plain JSON Schema descriptors, the 2025 eras' own (output schemas with content ids), with
      // this era's asynchronous guidance.
      tools: runtime.tools.map((entry) => forModernEra(withSchemaId(entry.tool)) as Tool),
    };
  });

  server.setRequestHandler('tools/call', async (request, context) => {
    const { name } = request.params;
    logger.debug({ tool: name, arguments: request.params.arguments }, 'tools/call (2026-07-28)');
    const entry = runtime.tools.find((candidate) => candidate.tool.name === name);
    if (entry === undefined) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown tool "${name}"`);
    }
    const asTask =
      optedIntoTasks(context.mcpReq.envelope) && entry.tool.execution?.taskSupport === 'optional';
    const outcome = await entry.call(request.params.arguments ?? {}, {
      signal: context.mcpReq.signal,
      progress: progressReporter(
        context.mcpReq._meta?.progressToken,
        (notification) => context.mcpReq.notify(notification),
        logger,
      ),
      keepOpen: !asTask,
    });
    if (asTask && outcome.kind === 'operation' && outcome.snapshot.status === 'running') {
      const task = await tasks.createTask({ context: { operationId: outcome.snapshot.id } });
      // The SDK passes a task result through as it is (SEP-2663 extends tools/call's result).
      return createTaskResult(task) as CreateTaskResult & CallToolResult;
    }
    return toCallToolResult(outcome) as CallToolResult;
  });

  /** The task a tasks/* request names, refused as SEP-2663 says when it may not ask. */
  const taskOf = (params: TaskParams, context: ServerContext) => {
    if (!optedIntoTasks(context.mcpReq.envelope)) {
      throw new MissingRequiredClientCapabilityError({
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    }
    if (!tasks.has(params.taskId)) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `no task ${params.taskId}`);
    }
    return params.taskId;
  };

  server.setRequestHandler('tasks/get', { params: TASK_PARAMS }, async (params, context) => {
    const task = await detailedTask(tasks, taskOf(params, context));
    if (task === undefined) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `no task ${params.taskId}`);
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
      typeof (value as { taskId?: unknown }).taskId === 'string'
        ? { value: value as TaskParams }
        : { issues: [{ message: 'params.taskId must be a string' }] },
  },
};
