// status, await and cancel: the operations of this server, by id.
import { BUILTIN_TOOLS, type OperationSnapshot } from '@ahma/core';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { startHeartbeat } from '../calls/heartbeat.js';
import {
  COMMAND_OUTPUT_SCHEMA,
  commandResult,
  describeFinished,
  finishedResult,
  OPERATIONS_OUTPUT_SCHEMA,
  outputSchemaWithError,
} from '../calls/results.js';
import {
  NEVER_A_TASK,
  invalidArguments,
  refused,
  refusing,
  type ToolContext,
  type ToolEntry,
  type ToolOutcome,
} from './tool.js';

/**
 * `await`'s wait when the call names none: below the 60 s after which common clients (the SDK
 * clients, MCP Inspector) give up on a request, so the agent gets what is still running instead of
 * a timeout error.
 */
export const AWAIT_DEFAULT_SECONDS = 50;

const idsProperty = {
  type: 'array',
  items: { type: 'string' },
  description: 'Operation ids; omit for all.',
};

const STATUS: Tool = {
  name: BUILTIN_TOOLS.status,
  description:
    'Snapshot of operations (running and recently finished), without waiting. Finished ones include their exit code and output.',
  inputSchema: { type: 'object', properties: { ids: idsProperty }, additionalProperties: false },
  outputSchema: outputSchemaWithError(OPERATIONS_OUTPUT_SCHEMA),
  execution: NEVER_A_TASK,
};

const AWAIT: Tool = {
  name: BUILTIN_TOOLS.await,
  description:
    'Wait until the named operations (or, with no ids, all running ones) finish, then return their results; those still running after the timeout are returned as running (call again to keep waiting). Use it only when you cannot continue without a result.',
  inputSchema: {
    type: 'object',
    properties: {
      ids: idsProperty,
      timeout_seconds: {
        type: 'number',
        exclusiveMinimum: 0,
        maximum: 86400,
        description: `Stop waiting after this many seconds and return what is still running (default ${String(AWAIT_DEFAULT_SECONDS)}, below the 60 s request timeout of common clients).`,
      },
    },
    additionalProperties: false,
  },
  outputSchema: outputSchemaWithError(OPERATIONS_OUTPUT_SCHEMA),
  execution: NEVER_A_TASK,
};

const CANCEL: Tool = {
  name: BUILTIN_TOOLS.cancel,
  description: "Cancel an operation: its processes are killed and it ends 'cancelled'.",
  inputSchema: {
    type: 'object',
    properties: {
      id: { type: 'string', description: 'The operation id.' },
      reason: { type: 'string', description: 'Why, for the record.' },
    },
    required: ['id'],
    additionalProperties: false,
  },
  outputSchema: outputSchemaWithError(COMMAND_OUTPUT_SCHEMA),
  execution: NEVER_A_TASK,
};

/**
 * The operations as an answer. `isError` says whether any of the operations the agent named (or
 * waited for) failed; a snapshot of the whole history is not an error because an old one failed.
 */
function operationsAnswer(
  snapshots: readonly OperationSnapshot[],
  heading: string,
  named: boolean,
): ToolOutcome {
  const operations = snapshots.map(commandResult);
  const text =
    operations.length === 0
      ? `${heading}: no operations.`
      : operations
          .map((o) =>
            o.status === 'running'
              ? `${o.operation_id} running (${o.tool})`
              : o.status === 'queued'
                ? `${o.operation_id} queued (${o.tool}): waits for its workspace ${o.workspace} behind ${o.queued_behind}, ${String(o.queue_position)} in line`
                : describeFinished(o),
          )
          .join('\n\n');
  const result: CallToolResult = {
    content: [{ type: 'text', text }],
    structuredContent: { operations },
    isError:
      named &&
      operations.some(
        (o) => o.status !== 'running' && o.status !== 'queued' && o.status !== 'completed',
      ),
  };
  return { kind: 'answer', result };
}

export function operationTools(context: ToolContext): ToolEntry[] {
  const { operations } = context.engine;
  const ids = (args: Record<string, unknown>) => args['ids'] as string[] | undefined;
  const fromWords = (words: readonly string[]) => (words.length === 0 ? {} : { ids: [...words] });
  return [
    {
      tool: STATUS,
      fromWords,
      call: (args) =>
        refusing(
          () =>
            invalidArguments(context, STATUS, args) ??
            operationsAnswer(operations.status(ids(args)), 'status', ids(args) !== undefined),
        ),
    },
    {
      tool: AWAIT,
      fromWords,
      call: (args, call) =>
        refusing(async () => {
          const invalid = invalidArguments(context, AWAIT, args);
          if (invalid !== undefined) return invalid;
          const seconds =
            typeof args['timeout_seconds'] === 'number'
              ? args['timeout_seconds']
              : AWAIT_DEFAULT_SECONDS;
          const named = ids(args);
          const stop = startHeartbeat(
            call.progress,
            context.heartbeatMs,
            (elapsed) =>
              `waiting for ${named === undefined ? 'every running operation' : named.join(', ')} (${String(elapsed)} s)`,
          );
          try {
            return operationsAnswer(
              await operations.await(named, seconds * 1000, call.signal),
              'await',
              true,
            );
          } finally {
            await stop();
          }
        }),
    },
    {
      tool: CANCEL,
      fromWords: (words) => (words[0] === undefined ? {} : { id: words[0] }),
      call: (args) =>
        refusing(async () => {
          const invalid = invalidArguments(context, CANCEL, args);
          if (invalid !== undefined) return invalid;
          const id = String(args['id']);
          const reason = typeof args['reason'] === 'string' ? args['reason'] : undefined;
          const wasRunning = operations.cancel(id, reason);
          const [snapshot] = await operations.await([id]);
          if (snapshot === undefined) return refused(`no operation ${id}`, 'OPERATION_UNKNOWN');
          const result = finishedResult(snapshot);
          if (!wasRunning) {
            result.content.unshift({
              type: 'text',
              text: `${id} had already finished (${snapshot.status}).`,
            });
            return { kind: 'answer', result };
          }
          // The cancel itself succeeded, whatever the command's status says.
          return { kind: 'answer', result: { ...result, isError: false } };
        }),
    },
  ];
}
