// MCP 2025-11-25 tasks (SPEC §12) over the SDK v1's experimental task support
// (docs/decisions/0001): a task IS an operation. The store below is a view of the engine's
// operations — task id = operation id, status and result are the operation's, cancel kills it —
// adding only what tasks have on top: the TTL and which connection's tasks they are. One store
// per connection: tasks/list, tasks/get and tasks/cancel see that connection's tasks only.
import { randomBytes } from 'node:crypto';
import type { CreateTaskOptions, TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import type { CallToolResult, Result, Task } from '@modelcontextprotocol/sdk/types.js';
import { AhmaError, type Engine, type OperationSnapshot } from '@ahma/core';
import { finishedResult } from '../calls/results.js';

/** TTL granted when a call asks for none, and the most granted (ms). */
export const DEFAULT_TASK_TTL_MS = 60 * 60_000;
export const MAX_TASK_TTL_MS = 24 * 60 * 60_000;
/** How often a client polling tasks/get is asked to look (ms). */
export const TASK_POLL_INTERVAL_MS = 1000;
const PAGE_SIZE = 100;
/** How long a tasks/cancel waits for the killed operation to report its end. */
const CANCEL_WAIT_MS = 10_000;

interface TaskEntry {
  /** Creation order within the store: what a tasks/list cursor names (see listTasks). */
  readonly seq: number;
  readonly ttl: number;
  readonly createdAt: Date;
  expiry: NodeJS.Timeout | undefined;
  /** A call answered without an operation (refused): its task is born completed with this. */
  readonly settled?: CallToolResult;
}

export class OperationTaskStore implements TaskStore {
  readonly #operations: Engine['operations'];
  /** This connection's tasks, by operation id, in creation order. */
  readonly #tasks = new Map<string, TaskEntry>();
  readonly #pageSize: number;
  /** The last creation sequence number given (TaskEntry.seq). */
  #seq = 0;

  constructor(operations: Engine['operations'], options: { pageSize?: number } = {}) {
    this.#operations = operations;
    this.#pageSize = options.pageSize ?? PAGE_SIZE;
  }

  /** How many tasks this connection has. */
  get size(): number {
    return this.#tasks.size;
  }

  /** Whether `id` is one of this connection's tasks. */
  has(id: string): boolean {
    return this.#tasks.has(id);
  }

  /**
   * Makes the operation the call started (`context.operationId`) a task. The TTL counts from
   * now; a task still running when it passes is kept until it ends, then forgotten.
   */
  createTask(taskParams: CreateTaskOptions): Promise<Task> {
    const id = taskParams.context?.['operationId'];
    const operation = typeof id === 'string' ? this.#operation(id) : undefined;
    if (operation === undefined) {
      return Promise.reject(new Error('a task is made of an operation the call started'));
    }
    const entry = this.#add(operation.id, taskParams.ttl);
    return Promise.resolve(this.#task(operation, entry));
  }

  /**
   * The task of a call answered without an operation (its arguments refused): born completed,
   * its result the tool error the call would have answered (SPEC §2: never a protocol error).
   */
  settle(result: CallToolResult, ttl: number | null | undefined): Task {
    const id = `task_${randomBytes(6).toString('hex')}`;
    const entry = this.#add(id, ttl, result);
    return this.#settledTask(id, entry);
  }

  /** The result of a task born completed; undefined for a task of an operation. */
  settledResult(id: string): CallToolResult | undefined {
    return this.#tasks.get(id)?.settled;
  }

  getTask(taskId: string): Promise<Task | null> {
    return Promise.resolve(this.#view(taskId) ?? null);
  }

  /** The operation holds its result; nothing is stored apart. */
  storeTaskResult(): Promise<void> {
    return Promise.resolve();
  }

  getTaskResult(taskId: string): Promise<Result> {
    const settled = this.settledResult(taskId);
    if (settled !== undefined) return Promise.resolve(settled);
    const found = this.#find(taskId);
    if (found === undefined) return Promise.reject(new Error(`no task ${taskId}`));
    // What the call would have answered had it blocked.
    return Promise.resolve(finishedResult(found.operation));
  }

  /** tasks/cancel: kills the operation's processes and waits for it to end, like `cancel`. */
  async updateTaskStatus(taskId: string, status: Task['status']): Promise<void> {
    if (status !== 'cancelled') return; // an operation's status is its own
    if (this.#find(taskId) === undefined) throw new Error(`no task ${taskId}`);
    this.#operations.cancel(taskId, 'cancelled by tasks/cancel');
    await this.#operations.await([taskId], CANCEL_WAIT_MS);
  }

  /**
   * A page of this connection's tasks in creation order. The cursor (opaque to the client) is the
   * creation sequence number of the page's last task, not its id: the next page starts after that
   * position even when that task has expired or left the history since.
   */
  listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const after = cursor === undefined ? 0 : this.#cursorSeq(cursor);
    if (after === undefined) return Promise.reject(new Error(`unknown cursor ${String(cursor)}`));
    const tasks: Task[] = [];
    let lastSeq = after;
    // #tasks is in creation order, so in seq order.
    for (const [id, entry] of this.#tasks) {
      if (entry.seq <= after) continue;
      const task = this.#view(id);
      if (task === undefined) continue;
      if (tasks.length === this.#pageSize) {
        return Promise.resolve({ tasks, nextCursor: cursorOf(lastSeq) });
      }
      tasks.push(task);
      lastSeq = entry.seq;
    }
    return Promise.resolve({ tasks });
  }

  /** The task of a finished or changed operation of this connection, for its status notification. */
  taskOf(operation: OperationSnapshot): Task | undefined {
    const entry = this.#tasks.get(operation.id);
    return entry === undefined ? undefined : this.#task(operation, entry);
  }

  /** Forgets every task (the connection closed). */
  clear(): void {
    for (const entry of this.#tasks.values()) clearTimeout(entry.expiry);
    this.#tasks.clear();
  }

  #add(id: string, ttl: number | null | undefined, settled?: CallToolResult): TaskEntry {
    const entry: TaskEntry = {
      seq: ++this.#seq,
      ttl: Math.min(Math.max(ttl ?? DEFAULT_TASK_TTL_MS, 1000), MAX_TASK_TTL_MS),
      createdAt: new Date(),
      expiry: undefined,
      ...(settled === undefined ? {} : { settled }),
    };
    entry.expiry = setTimeout(() => this.#expire(id), entry.ttl);
    entry.expiry.unref();
    this.#tasks.set(id, entry);
    return entry;
  }

  /** The seq a cursor this store issued names; undefined for anything else. */
  #cursorSeq(cursor: string): number | undefined {
    const match = /^c(\d{1,15})$/.exec(cursor);
    const seq = match?.[1] === undefined ? undefined : Number(match[1]);
    return seq !== undefined && seq <= this.#seq ? seq : undefined;
  }

  /** The task `id` as it stands, or undefined when there is none (any more). */
  #view(id: string): Task | undefined {
    const entry = this.#tasks.get(id);
    if (entry?.settled !== undefined) return this.#settledTask(id, entry);
    const found = this.#find(id);
    // An operation pushed out of the history is no task any more: forget it now, not at its TTL.
    if (found === undefined && entry !== undefined) this.#forget(id, entry);
    return found === undefined ? undefined : this.#task(found.operation, found.entry);
  }

  #forget(id: string, entry: TaskEntry): void {
    clearTimeout(entry.expiry);
    this.#tasks.delete(id);
  }

  #settledTask(id: string, entry: TaskEntry): Task {
    const at = entry.createdAt.toISOString();
    return {
      taskId: id,
      status: 'completed',
      ttl: entry.ttl,
      createdAt: at,
      lastUpdatedAt: at,
      pollInterval: TASK_POLL_INTERVAL_MS,
      statusMessage: 'refused before anything ran',
    };
  }

  #find(id: string): { operation: OperationSnapshot; entry: TaskEntry } | undefined {
    const entry = this.#tasks.get(id);
    const operation = entry === undefined ? undefined : this.#operation(id);
    return entry === undefined || operation === undefined ? undefined : { operation, entry };
  }

  #operation(id: string): OperationSnapshot | undefined {
    // The engine keeps a bounded history: an operation pushed out of it is no task either.
    try {
      return this.#operations.status([id])[0];
    } catch (error) {
      if (error instanceof AhmaError) return undefined; // OPERATION_UNKNOWN
      throw error;
    }
  }

  #expire(id: string): void {
    const operation = this.#operation(id);
    if (operation?.status === 'running') {
      void this.#operations.await([id]).then(() => this.#tasks.delete(id));
      return;
    }
    this.#tasks.delete(id);
  }

  #task(operation: OperationSnapshot, entry: TaskEntry): Task {
    const message = statusMessage(operation);
    return {
      taskId: operation.id,
      status: taskStatus(operation),
      ttl: entry.ttl,
      createdAt: entry.createdAt.toISOString(),
      lastUpdatedAt: (operation.finishedAt ?? entry.createdAt).toISOString(),
      pollInterval: TASK_POLL_INTERVAL_MS,
      ...(message === undefined ? {} : { statusMessage: message }),
    };
  }
}

/** The tasks/list cursor naming creation sequence number `seq` (clients treat it as opaque). */
function cursorOf(seq: number): string {
  return `c${String(seq)}`;
}

/**
 * An operation's status as a task's. A command that ran and exited non-zero is `completed` with
 * an `isError` result (the tool ran; its result says how it went); a timeout is `failed`.
 */
function taskStatus(operation: OperationSnapshot): Task['status'] {
  switch (operation.status) {
    case 'running':
      return 'working';
    case 'cancelled':
      return 'cancelled';
    case 'timed_out':
      return 'failed';
    default:
      return 'completed';
  }
}

function statusMessage(operation: OperationSnapshot): string | undefined {
  switch (operation.status) {
    case 'running':
      return `${operation.tool} is running`;
    case 'cancelled':
      return operation.cancelReason ?? 'cancelled';
    case 'timed_out':
      return `${operation.tool} timed out`;
    default:
      return `${operation.tool} exited with code ${String(operation.result?.exitCode ?? 'none')}`;
  }
}
