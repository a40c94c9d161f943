// MCP 2025-11-25 tasks (SPEC §12): a task-augmented tools/call answers with a task at once and
// runs the operation; tasks/get, tasks/result, tasks/list and tasks/cancel are views of that
// operation; notifications/tasks/status tells its end. The real runtime in this process, the SDK's
// real Client and its experimental tasks API, real processes.
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  RELATED_TASK_META_KEY,
  TaskStatusNotificationSchema,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect } from 'vitest';
import {
  it,
  processesMatching,
  structured,
  uniqueMarker,
  waitFor,
  type CommandResult,
  type Operations,
  type E2E,
  type RunningServer,
} from '../support/harness.js';
import { httpBinary, httpServer, post, rawSession } from '../support/http.js';

async function taskServer(e2e: E2E, args: readonly string[] = []) {
  const server = await e2e.inProcess(await e2e.scope(), args);
  const statuses: Task[] = [];
  server.client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
    statuses.push(notification.params as Task);
  });
  return { server, statuses };
}

function startTask(
  server: RunningServer,
  name: string,
  args: Record<string, unknown>,
  task: { ttl?: number } = {},
) {
  return server.client.request(
    { method: 'tools/call', params: { name, arguments: args, task } },
    CreateTaskResultSchema,
  );
}

describe.concurrent('2025-11-25 tasks', { timeout: 60_000 }, () => {
  it('SPEC §12: the server declares tasks, and every tool says whether it runs as a task', async ({
    e2e,
  }) => {
    const { server } = await taskServer(e2e, ['--registry']);
    expect(server.client.getServerCapabilities()?.tasks).toEqual({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await server.client.listTools();
    const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
    for (const name of [
      'status',
      'await',
      'cancel',
      'output',
      'write_stdin',
      'activate_tools',
      'add_command',
      'help',
    ]) {
      expect(support[name], name).toBe('forbidden');
    }
    for (const name of ['sandboxed_shell', 'e2e_sync', 'e2e_async', 'slow', 'argv']) {
      expect(support[name], name).toBe('optional');
    }
  });

  it('SPEC §12: a task-augmented call answers at once, even for a synchronous tool; the task is the operation, and tasks/result waits for it', async ({
    e2e,
  }) => {
    const { server, statuses } = await taskServer(e2e);
    const started = Date.now();
    // Long enough that an answer within a second, on a busy machine, was not waiting for it.
    const { task } = await startTask(server, 'sandboxed_shell', {
      command: 'sleep 1.5; echo from-task',
      execution_mode: 'Synchronous',
    });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(task).toMatchObject({ status: 'working', ttl: 3_600_000, pollInterval: 1000 });
    expect(task.taskId).toMatch(/^op_/);
    // The same thing for status and await.
    const listed = structured<Operations>(await server.call('status', { ids: [task.taskId] }));
    expect(listed.operations[0]).toMatchObject({ operation_id: task.taskId, status: 'running' });
    expect(await server.client.experimental.tasks.getTask(task.taskId)).toMatchObject({
      status: 'working',
    });

    const result = await server.client.experimental.tasks.getTaskResult(
      task.taskId,
      CallToolResultSchema,
    );
    expect(result.structuredContent).toMatchObject({
      operation_id: task.taskId,
      status: 'completed',
      output: 'from-task\n',
    });
    expect(result._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId: task.taskId });
    expect(await server.client.experimental.tasks.getTask(task.taskId)).toMatchObject({
      status: 'completed',
    });
    await waitFor(() => statuses.some((s) => s.taskId === task.taskId), 'the status notification');
    expect(statuses.find((s) => s.taskId === task.taskId)?.status).toBe('completed');
    // Its result is the task's, never a log-message push.
    expect(server.messages.filter((m) => JSON.stringify(m.data).includes(task.taskId))).toEqual([]);
  });

  it('SPEC §12: a command that exits non-zero is a completed task with an isError result; a timeout is a failed task', async ({
    e2e,
  }) => {
    const { server } = await taskServer(e2e);
    const { task: exited } = await startTask(server, 'sandboxed_shell', { command: 'exit 3' });
    const result = await server.client.experimental.tasks.getTaskResult(
      exited.taskId,
      CallToolResultSchema,
    );
    expect(result.isError).toBe(true);
    expect(structured<CommandResult>(result)).toMatchObject({ status: 'failed', exit_code: 3 });
    expect((await server.client.experimental.tasks.getTask(exited.taskId)).status).toBe(
      'completed',
    );
    const { task: slow } = await startTask(server, 'sandboxed_shell', {
      command: 'sleep 5',
      timeout_seconds: 0.3,
    });
    await server.client.experimental.tasks.getTaskResult(slow.taskId, CallToolResultSchema);
    expect(await server.client.experimental.tasks.getTask(slow.taskId)).toMatchObject({
      status: 'failed',
      statusMessage: 'sandboxed_shell timed out',
    });
  });

  it('SPEC §12: tasks/cancel kills the processes, like cancel', async ({ e2e }) => {
    const { server, statuses } = await taskServer(e2e);
    const marker = uniqueMarker();
    const { task } = await startTask(server, 'sandboxed_shell', {
      // exec -a: the process's name carries the marker (a warm shell's command line does not).
      command: `exec -a ${marker} sleep 60`,
    });
    await waitFor(async () => (await processesMatching(marker)).length > 0, 'the command running');
    const cancelled = await server.client.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
    expect(await processesMatching(marker)).toEqual([]);
    await waitFor(
      () => statuses.some((s) => s.taskId === task.taskId && s.status === 'cancelled'),
      'the cancelled status notification',
    );
    await expect(server.client.experimental.tasks.cancelTask(task.taskId)).rejects.toThrow(
      /terminal status/,
    );
  });

  it('SPEC §12: many tasks at once all complete, each with its own result', async ({ e2e }) => {
    const { server } = await taskServer(e2e);
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        startTask(server, 'sandboxed_shell', { command: `sleep 0.3; echo task-${String(i)}` }),
      ),
    );
    const results = await Promise.all(
      created.map(({ task }) =>
        server.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema),
      ),
    );
    expect(results.map((r) => structured<CommandResult>(r).output)).toEqual(
      created.map((_, i) => `task-${String(i)}\n`),
    );
    expect(new Set(created.map(({ task }) => task.taskId)).size).toBe(20);
  });

  it('SPEC §12: tasks/list lists the tasks of this connection', async ({ e2e }) => {
    const { server } = await taskServer(e2e);
    const ids: string[] = [];
    for (const word of ['a', 'b', 'c']) {
      ids.push(
        (await startTask(server, 'sandboxed_shell', { command: `echo ${word}` })).task.taskId,
      );
    }
    // A plain call's operation is no task.
    await server.call('sandboxed_shell', { command: 'echo plain', execution_mode: 'Synchronous' });
    const { tasks } = await server.client.experimental.tasks.listTasks();
    expect(tasks.map((t) => t.taskId)).toEqual(ids);
  });

  it('SPEC §12: the TTL asked for is honoured (at least 1 s): the finished task is then forgotten', async ({
    e2e,
  }) => {
    const { server } = await taskServer(e2e);
    const { task } = await startTask(server, 'sandboxed_shell', { command: 'true' }, { ttl: 10 });
    expect(task.ttl).toBe(1000);
    await server.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    await waitFor(
      () =>
        server.client.experimental.tasks.getTask(task.taskId).then(
          () => false,
          (error: unknown) => String(error),
        ),
      'the task to expire',
      5000,
    ).then((error) => expect(error).toMatch(/not found/i));
    // The operation itself stays in the history, as every operation does.
    const listed = structured<Operations>(await server.call('status', { ids: [task.taskId] }));
    expect(listed.operations[0]?.operation_id).toBe(task.taskId);
  });

  it('SPEC §12: a tool that answers at once refuses a task (-32601); a refused call is a completed task whose result is the tool error', async ({
    e2e,
  }) => {
    const { server } = await taskServer(e2e);
    await expect(startTask(server, 'status', {})).rejects.toThrow(/-32601.*never a task/);
    const { task } = await startTask(server, 'sandboxed_shell', {});
    expect(task).toMatchObject({
      status: 'completed',
      statusMessage: 'refused before anything ran',
    });
    const result = await server.client.experimental.tasks.getTaskResult(
      task.taskId,
      CallToolResultSchema,
    );
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: { code: 'ARGUMENTS_INVALID' } });
    expect(result._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId: task.taskId });
    expect((await server.client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).toEqual(
      [task.taskId],
    );
  });

  it.for([
    ['shared', []],
    ['isolated', ['--session-isolation']],
  ] as const)(
    "SPEC §12: over HTTP (%s sessions) a task outlives the request that made it, and is its session's alone",
    async ([, args], { e2e }) => {
      // The real binary: only it serves isolated sessions from processes of their own.
      const { url, headers } = await httpBinary(e2e, await e2e.scope(), args);
      const session = await rawSession(url, headers);
      const ask = async (id: number, method: string, params: object, from = session) => {
        const response = await post(
          url,
          { jsonrpc: '2.0', id, method, params },
          { accept: 'application/json', 'mcp-session-id': from, ...headers },
        );
        return (await response.json()) as { result?: Record<string, unknown>; error?: object };
      };
      const created = await ask(1, 'tools/call', {
        name: 'sandboxed_shell',
        arguments: { command: 'sleep 0.5; echo later' },
        task: { ttl: 60_000 },
      });
      const taskId = (created.result?.['task'] as Task | undefined)?.taskId ?? '';
      expect(taskId).toMatch(/^op_/);
      // No stream is open for the session meanwhile; the result is asked for in a new request.
      const result = await ask(2, 'tasks/result', { taskId });
      expect(result.result?.['structuredContent']).toMatchObject({
        operation_id: taskId,
        status: 'completed',
        output: 'later\n',
      });
      const other = await rawSession(url, headers);
      expect((await ask(3, 'tasks/get', { taskId }, other)).error).toMatchObject({ code: -32602 });
      expect((await ask(4, 'tasks/get', { taskId })).result).toMatchObject({ status: 'completed' });
    },
  );

  it('SPEC §12: over HTTP a task outlives a dropped stream: the client leaves in the middle of tasks/result, the command runs on, and a new tasks/result gets its output', async ({
    e2e,
  }) => {
    const { url } = await httpServer(e2e, await e2e.scope());
    const session = await rawSession(url);
    const headers = { 'mcp-session-id': session };
    const marker = uniqueMarker();
    const created = await post(
      url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'sandboxed_shell',
          // exec -a: the process's name carries the marker.
          arguments: { command: `(exec -a ${marker} sleep 1.5); echo survived` },
          task: {},
        },
      },
      { accept: 'application/json', ...headers },
    );
    const { result } = (await created.json()) as { result: { task: Task } };
    const { taskId } = result.task;
    // tasks/result as an SSE stream, dropped while it waits.
    const leaving = new AbortController();
    const dropped = fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream, application/json',
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tasks/result', params: { taskId } }),
      signal: leaving.signal,
    });
    await waitFor(async () => (await processesMatching(marker)).length > 0, 'the command to run');
    leaving.abort();
    await expect(dropped.then((response) => response.text())).rejects.toThrow();
    expect((await processesMatching(marker)).length).toBeGreaterThan(0);
    const again = await post(
      url,
      { jsonrpc: '2.0', id: 3, method: 'tasks/result', params: { taskId } },
      { accept: 'application/json', ...headers },
    );
    const answer = (await again.json()) as { result?: { structuredContent?: object } };
    expect(answer.result?.structuredContent).toMatchObject({
      operation_id: taskId,
      status: 'completed',
      output: 'survived\n',
    });
  });
});
