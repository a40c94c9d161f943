// tasks/list paging (SPEC §12) when the task a cursor names is gone: its TTL passed, or its
// operation left the engine's bounded history. The cursor is a creation position, so the next page
// still lists the tasks after it. The store over a real engine's operations (a small history and
// page), and the protocol through the SDK's real Client.
import { createEngine, type Engine, type OperationSnapshot } from '@ahma/core';
import { CreateTaskResultSchema, ListTasksResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, it, type TestContext } from 'vitest';
import { OperationTaskStore } from '../../src/protocol/tasks.js';
import { E2E, waitFor } from '../support/harness.js';

/** A fresh E2E for one concurrent test, cleaned up when it ends. */
function setup(context: TestContext): E2E {
  const e2e = new E2E();
  context.onTestFinished(() => e2e.cleanup());
  return e2e;
}

/** A real engine keeping `historyCount` finished operations; no command runs in these tests. */
async function engineWithHistory(context: TestContext, historyCount: number): Promise<Engine> {
  const scope = await setup(context).scope();
  const engine = await createEngine({
    scope: scope.dir,
    env: scope.env,
    noSandbox: true,
    noShellPool: true,
    historyCount,
  });
  context.onTestFinished(() => engine.close());
  return engine;
}

/** A finished operation (a task needs one): ends at once with `output`. */
async function finishedOperation(engine: Engine, output: string): Promise<OperationSnapshot> {
  const { id } = engine.operations.start('paging', () =>
    Promise.resolve({
      status: 'completed',
      exitCode: 0,
      signal: null,
      output,
      truncated: false,
      fullOutputPath: undefined,
      durationMs: 0,
    }),
  );
  const [finished] = await engine.operations.await([id]);
  if (finished === undefined) throw new Error(`${id} is unknown`);
  return finished;
}

async function createTasks(
  store: OperationTaskStore,
  engine: Engine,
  ttls: readonly (number | undefined)[],
): Promise<string[]> {
  const ids: string[] = [];
  for (const [n, ttl] of ttls.entries()) {
    const operation = await finishedOperation(engine, `task ${String(n)}`);
    const task = await store.createTask({
      ttl: ttl ?? null,
      context: { operationId: operation.id },
    });
    ids.push(task.taskId);
  }
  return ids;
}

describe.concurrent('tasks/list paging past a task that is gone', { timeout: 60_000 }, () => {
  it("SPEC §12: tasks/list: the next page lists the rest when the cursor's task has left the operations' history", async (context) => {
    const engine = await engineWithHistory(context, 4);
    const store = new OperationTaskStore(engine.operations, { pageSize: 2 });
    context.onTestFinished(() => store.clear());
    const ids = await createTasks(store, engine, [undefined, undefined, undefined, undefined]);
    const first = await store.listTasks();
    context.expect(first.tasks.map((task) => task.taskId)).toEqual(ids.slice(0, 2));
    context.expect(first.nextCursor).toBeTypeOf('string');
    // Two more operations (no tasks) push the first page's out of the 4-entry history.
    await finishedOperation(engine, 'not a task');
    await finishedOperation(engine, 'not a task either');
    context.expect(await store.getTask(ids[1] ?? '')).toBeNull();
    const next = await store.listTasks(first.nextCursor);
    context.expect(next.tasks.map((task) => task.taskId)).toEqual(ids.slice(2));
    context.expect(next.nextCursor).toBeUndefined();
  });

  it("SPEC §12: tasks/list: the next page lists the rest when the cursor's task has expired (its TTL passed)", async (context) => {
    const engine = await engineWithHistory(context, 500);
    const store = new OperationTaskStore(engine.operations, { pageSize: 2 });
    context.onTestFinished(() => store.clear());
    // The first page's tasks live the least TTL granted (1 s), the others an hour.
    const ids = await createTasks(store, engine, [1, 1, undefined, undefined, undefined]);
    const first = await store.listTasks();
    context.expect(first.tasks.map((task) => task.taskId)).toEqual(ids.slice(0, 2));
    await waitFor(
      async () => (await store.getTask(ids[1] ?? '')) === null,
      "the cursor's task to expire",
    );
    const second = await store.listTasks(first.nextCursor);
    context.expect(second.tasks.map((task) => task.taskId)).toEqual(ids.slice(2, 4));
    const third = await store.listTasks(second.nextCursor);
    context.expect(third.tasks.map((task) => task.taskId)).toEqual(ids.slice(4));
    context.expect(third.nextCursor).toBeUndefined();
  });

  it('SPEC §12: tasks/list: a cursor it never issued is refused', async (context) => {
    const engine = await engineWithHistory(context, 500);
    const store = new OperationTaskStore(engine.operations, { pageSize: 2 });
    context.onTestFinished(() => store.clear());
    const ids = await createTasks(store, engine, [undefined, undefined, undefined]);
    for (const cursor of [ids[0] ?? '', 'c99', 'nonsense', '']) {
      await context.expect(store.listTasks(cursor), cursor).rejects.toThrow(/unknown cursor/);
    }
  });

  it("SPEC §12: over the protocol, tasks/list pages on after the cursor's task expired (no -32602 unknown cursor)", async (context) => {
    const e2e = setup(context);
    const server = await e2e.inProcess(await e2e.scope());
    const startTask = (command: string, ttl: number | undefined) =>
      server.client.request(
        {
          method: 'tools/call',
          params: {
            name: 'sandboxed_shell',
            arguments: { command },
            task: ttl === undefined ? {} : { ttl },
          },
        },
        CreateTaskResultSchema,
      );
    // A full page (100) of tasks that expire after 3 s, then one that lives an hour.
    await Promise.all(Array.from({ length: 100 }, (_, n) => startTask(`echo ${String(n)}`, 3000)));
    const { task: last } = await startTask('echo last', undefined);
    const first = await server.client.request(
      { method: 'tasks/list', params: {} },
      ListTasksResultSchema,
    );
    context.expect(first.tasks).toHaveLength(100);
    context.expect(first.nextCursor).toBeTypeOf('string');
    const cursorTask = first.tasks.at(-1)?.taskId ?? '';
    await waitFor(
      () =>
        server.client.experimental.tasks.getTask(cursorTask).then(
          () => false,
          () => true,
        ),
      "the cursor's task to expire",
    );
    const next = await server.client.request(
      { method: 'tasks/list', params: { cursor: first.nextCursor } },
      ListTasksResultSchema,
    );
    context.expect(next.tasks.map((task) => task.taskId)).toEqual([last.taskId]);
    context.expect(next.nextCursor).toBeUndefined();
  });
});
