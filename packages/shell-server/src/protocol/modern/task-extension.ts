// SEP-2663, the tasks extension of the 2026-07-28 era (`io.modelcontextprotocol/tasks`,
// docs/decisions/0001): the same tasks as the 2025-11-25 ones (protocol/tasks.ts: a task IS an
// operation), in the extension's shapes. A request opts in per request, in its `_meta` envelope;
// only then does an asynchronous call answer with a task, and only then may it use tasks/get,
// tasks/update and tasks/cancel. The result is inlined by tasks/get (there is no tasks/result).
import type { CallToolResult, Task } from '@modelcontextprotocol/sdk/types.js';
import type { OperationTaskStore } from '../tasks.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The per-request envelope key holding the client's capabilities. */
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

/** Whether a request's envelope declares the tasks extension among the client's capabilities. */
export function optedIntoTasks(envelope: Readonly<Record<string, unknown>> | undefined): boolean {
  const capabilities = envelope?.[CLIENT_CAPABILITIES_KEY];
  if (typeof capabilities !== 'object' || capabilities === null) return false;
  const extensions = (capabilities as { extensions?: unknown }).extensions;
  return typeof extensions === 'object' && extensions !== null && TASKS_EXTENSION in extensions;
}

/** A task as the extension's flat Task: `ttlMs`, `pollIntervalMs`, its own status words. */
// A type, not an interface: the SDK's handlers take results with an index signature.
export type ExtensionTask = {
  readonly taskId: string;
  readonly status: Task['status'];
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  readonly ttlMs: number | null;
  readonly pollIntervalMs?: number;
  readonly statusMessage?: string;
};

/** What an opted-in tools/call answers for a command still running: the task, flat. */
export type CreateTaskResult = ExtensionTask & { readonly resultType: 'task' };

/** tasks/get: the task, with its result inlined once it has one. */
export type DetailedTask = ExtensionTask & {
  readonly resultType: 'complete';
  readonly result?: CallToolResult & { readonly resultType: 'complete' };
};

export function createTaskResult(task: Task): CreateTaskResult {
  return { resultType: 'task', ...extensionTask(task) };
}

/**
 * The task `taskId` of `store` with its result inlined when completed; undefined when there is no
 * such task (any more).
 */
export async function detailedTask(
  store: OperationTaskStore,
  taskId: string,
): Promise<DetailedTask | undefined> {
  const task = await store.getTask(taskId);
  if (task === null) return undefined;
  const view = extensionTask(task);
  if (view.status !== 'completed') return { resultType: 'complete', ...view };
  // The inlined result is a whole tools/call result of this era, discriminator included.
  const result = (await store.getTaskResult(taskId)) as CallToolResult;
  return { resultType: 'complete', ...view, result: { ...result, resultType: 'complete' } };
}

/**
 * The extension keeps `failed` for protocol errors, which an operation never is: a command that
 * timed out ran, and its result (output so far, `isError`) is what the model needs, so it is
 * `completed` here (2025-11-25 calls it `failed`, with the same result).
 */
function extensionTask(task: Task): ExtensionTask {
  return {
    taskId: task.taskId,
    status: task.status === 'failed' ? 'completed' : task.status,
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.ttl,
    ...(task.pollInterval === undefined ? {} : { pollIntervalMs: task.pollInterval }),
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
  };
}
