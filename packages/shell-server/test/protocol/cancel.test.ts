// Cancellation end to end (SPEC §3): the `cancel` tool and MCP notifications/cancelled kill the
// operation's whole process tree — a setsid'ed grandchild included — and leave no zombie behind.
// Processes are found by a unique marker in their argv (`exec -a`) by scanning /proc.
import { afterEach, describe, expect, it } from 'vitest';
import {
  descendantsOf,
  E2E,
  exists,
  processesMatching,
  structured,
  textOf,
  uniqueMarker,
  waitFor,
  type CommandResult,
  type Operations,
  type ProcessInfo,
  type RunningServer,
  type StartedResult,
} from '../support/harness.js';

const e2e = new E2E();
afterEach(() => e2e.cleanup());

/** A script whose main process and a grandchild in its own session both sleep for 5 minutes. */
function treeScript(marker: string): string {
  return [
    `setsid bash -c 'exec -a ${marker}-grandchild sleep 300' </dev/null >/dev/null 2>&1 &`,
    `exec -a ${marker}-child sleep 300`,
  ].join('\n');
}

/** Waits until both processes of treeScript run, and returns them. */
async function waitForTree(marker: string): Promise<ProcessInfo[]> {
  return waitFor(async () => {
    const found = await processesMatching(marker);
    const child = found.find((info) => info.cmdline.startsWith(`${marker}-child`));
    const grandchild = found.find((info) => info.cmdline.startsWith(`${marker}-grandchild`));
    return child !== undefined && grandchild !== undefined ? [child, grandchild] : undefined;
  }, `processes marked ${marker}`);
}

/** No process of the operation survives, not even as a zombie, and the server has no zombie child. */
async function expectAllGone(
  server: RunningServer,
  marker: string,
  pids: readonly number[],
): Promise<void> {
  const survivors = pids.filter(exists);
  expect(survivors, `pids still in /proc: ${JSON.stringify(survivors)}`).toEqual([]);
  expect(await processesMatching(marker)).toEqual([]);
  const zombies = (await descendantsOf(server.pid)).filter((info) => info.state === 'Z');
  expect(zombies).toEqual([]);
}

describe('cancel', () => {
  it("SPEC §3: cancel kills a running operation's process group and its setsid'ed grandchild, leaving no zombie", async () => {
    const server = await e2e.inProcess(await e2e.scope(), ['--inline-wait', '0']);
    const marker = uniqueMarker();
    const started = await server.call('sandboxed_shell', { command: treeScript(marker) });
    const { operation_id } = structured<StartedResult>(started);
    const tree = await waitForTree(marker);
    // The grandchild escaped the command's process group and session: only tree-wide supervision
    // (not a process-group kill) can reach it.
    const [child, grandchild] = tree;
    expect(grandchild?.session).not.toBe(child?.session);
    expect(grandchild?.pgrp).not.toBe(child?.pgrp);

    const result = await server.call('cancel', { id: operation_id, reason: 'e2e test' });
    // The cancel succeeded, though the command ended 'cancelled'.
    expect(result.isError).toBe(false);
    expect(structured<CommandResult>(result)).toMatchObject({
      operation_id,
      tool: 'sandboxed_shell',
      status: 'cancelled',
    });
    expect(textOf(result)).toContain('cancelled; its processes were killed');
    // By the time cancel answers, the whole tree is gone.
    await expectAllGone(
      server,
      marker,
      tree.map((info) => info.pid),
    );
    const [status] = structured<Operations>(
      await server.call('status', { ids: [operation_id] }),
    ).operations;
    expect(status?.status).toBe('cancelled');
  });

  it('SPEC §3: cancelling an already finished operation says so and changes nothing', async () => {
    const server = await e2e.inProcess(await e2e.scope());
    const done = structured<CommandResult>(await server.call('e2e_sync', { value: 'x' }));
    const result = await server.call('cancel', { id: done.operation_id });
    expect(textOf(result)).toContain(`${done.operation_id} had already finished (completed)`);
    expect(structured<CommandResult>(result)).toMatchObject({ status: 'completed', exit_code: 0 });
  });

  it('SPEC §3: cancelling an unknown operation is a tool error naming it', async () => {
    const server = await e2e.inProcess(await e2e.scope());
    const result = await server.call('cancel', { id: 'op_missing_9' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('op_missing_9');
  });

  it('SPEC §3: an operation that outlives its async call is killed when the server shuts down', async () => {
    const server = await e2e.inProcess(await e2e.scope(), ['--inline-wait', '0']);
    const marker = uniqueMarker();
    await server.call('sandboxed_shell', { command: treeScript(marker) });
    const tree = await waitForTree(marker);
    await server.close();
    await waitFor(
      () => tree.every((info) => !exists(info.pid)),
      'the operation to be killed at shutdown',
      8000,
    );
    expect(await processesMatching(marker)).toEqual([]);
  });
});

describe('notifications/cancelled', () => {
  it('SPEC §3: notifications/cancelled for an in-flight synchronous call kills its process tree', async () => {
    // --sync makes sandboxed_shell block, so the request stays in flight while the command runs.
    const server = await e2e.inProcess(await e2e.scope(), ['--sync']);
    const marker = uniqueMarker();
    const controller = new AbortController();
    const call = server.call(
      'sandboxed_shell',
      { command: treeScript(marker) },
      { request: { signal: controller.signal } },
    );
    const tree = await waitForTree(marker);
    // The SDK sends notifications/cancelled for the request and rejects the call locally.
    controller.abort('the e2e test gives up');
    await expect(call).rejects.toThrow();
    await waitFor(
      () => tree.every((info) => !exists(info.pid)),
      'the cancelled command to die',
      8000,
    );
    await expectAllGone(
      server,
      marker,
      tree.map((info) => info.pid),
    );
    // The operation ended cancelled, and the server keeps serving.
    const operations = structured<Operations>(await server.call('status', {})).operations;
    expect(operations).toEqual([
      expect.objectContaining({ tool: 'sandboxed_shell', status: 'cancelled' }),
    ]);
    expect(
      structured<CommandResult>(await server.call('e2e_sync', { value: 'alive' })).output,
    ).toBe('sync\n--value\nalive\n');
  });

  it('SPEC §3: notifications/cancelled for a synchronous definition tool kills it before its own timeout', async () => {
    const server = await e2e.inProcess(await e2e.scope());
    const controller = new AbortController();
    const started = Date.now();
    // slow runs `sleep 30`; the per-call timeout keeps it from being killed by its own 1 s limit.
    const call = server.call(
      'slow',
      { timeout_seconds: 60 },
      { request: { signal: controller.signal } },
    );
    const sleeper = await waitFor(
      async () => (await descendantsOf(server.pid)).find((info) => info.cmdline === 'sleep 30'),
      'sleep 30 under the server',
    );
    controller.abort();
    await expect(call).rejects.toThrow();
    await waitFor(() => !exists(sleeper.pid), 'sleep 30 to die', 8000);
    expect(Date.now() - started).toBeLessThan(15_000);
    // The command's processes die before its supervisor reports the end: wait for the report.
    const operations = await waitFor(async () => {
      const now = structured<Operations>(await server.call('status', {})).operations;
      return now.every((operation) => operation.status !== 'running') ? now : undefined;
    }, 'the operation to end');
    expect(operations).toEqual([expect.objectContaining({ tool: 'slow', status: 'cancelled' })]);
  });
});
