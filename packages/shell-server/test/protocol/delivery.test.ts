// How results reach the client, within the MCP specification (SPEC §3, R2.2/R3.3): a quick async
// call answers inline with its result (the inline wait); a slower one answers `started` and its
// completion is pushed as notifications/message (logger "ahma", level info); progress goes out only
// while a call is open (sync calls, the inline wait, `await`), never after its response; and the
// per-call execution_mode (R10.1). The SDK Client must report no error in any of these (E2E.cleanup
// fails the test otherwise: a progress notification after the response is "an unknown token").
import { describe, expect } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import {
  it,
  processesMatching,
  pushedId,
  RawSession,
  sleep,
  structured,
  textOf,
  uniqueMarker,
  waitFor,
  type CommandResult,
  type E2E,
  type Operations,
  type RunningServer,
  type Scope,
  type StartedResult,
} from '../support/harness.js';

const AT_ONCE = ['--inline-wait', '0'];

/** A scope whose servers send progress heartbeats every 100 ms (the test-only interval). */
async function fastHeartbeatScope(e2e: E2E): Promise<Scope> {
  const scope = await e2e.scope();
  return { ...scope, env: { ...scope.env, AHMA_TEST_HEARTBEAT_MS: '100' } };
}

type Received = readonly { readonly at: number; readonly message: JSONRPCMessage }[];

const isProgress = (message: JSONRPCMessage) =>
  'method' in message && message.method === 'notifications/progress';

const tokenOf = (message: JSONRPCMessage): unknown =>
  'params' in message ? (message.params as { progressToken?: unknown }).progressToken : undefined;

/** R3.3: every progress notification arrived before the response of the request it belongs to. */
function expectNoProgressAfterResponses(received: Received): void {
  received.forEach(({ message }, index) => {
    if (!isProgress(message)) return;
    const token = tokenOf(message);
    const answeredBefore = received
      .slice(0, index)
      .some(
        ({ message: earlier }) => 'id' in earlier && !('method' in earlier) && earlier.id === token,
      );
    expect(answeredBefore, `progress for ${String(token)} after its response`).toBe(false);
  });
}

/** The progress notifications received for one request (the SDK's token is the request id). */
function progressOf(server: RunningServer, id: number): JSONRPCMessage[] {
  return server.received.map((r) => r.message).filter((m) => isProgress(m) && tokenOf(m) === id);
}

/** The id of the last request the client sent. */
function lastRequestId(server: RunningServer): number {
  const responses = server.received
    .map((r) => r.message)
    .filter((m): m is JSONRPCMessage & { id: number } => 'id' in m && typeof m.id === 'number');
  const last = responses.at(-1);
  if (last === undefined) throw new Error('no response yet');
  return last.id;
}

describe.concurrent('inline wait (SPEC §3 inline wait)', { timeout: 60_000 }, () => {
  it('SPEC §3 inline wait: a quick async call answers with its finished result, in the sync shape, and nothing is pushed', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const result = await server.call('sandboxed_shell', { command: 'echo quick; exit 2' });
    const content = structured<CommandResult>(result);
    expect(content).toEqual({
      operation_id: expect.stringMatching(/^op_/),
      tool: 'sandboxed_shell',
      status: 'failed',
      exit_code: 2,
      output: 'quick\n',
      truncated: false,
      duration_ms: expect.any(Number),
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(new RegExp(`^${content.operation_id} failed \\(exit code 2`));
    const definition = await server.call('e2e_async', { value: 'inline' });
    expect(structured<CommandResult>(definition)).toMatchObject({
      status: 'completed',
      output: 'async\n--value\ninline\n',
    });
    await sleep(500);
    expect(server.messages).toEqual([]);
    // The operation exists like any other.
    const status = structured<Operations>(
      await server.call('status', { ids: [content.operation_id] }),
    );
    expect(status.operations).toEqual([content]);
  });

  it('SPEC §3 inline wait: a command outlasting --inline-wait answers started after the wait, then its completion is pushed', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope(), ['--inline-wait', '1']);
    const before = Date.now();
    const result = await server.call('sandboxed_shell', { command: 'sleep 2.5; echo slow' });
    // It waited (about a second) before answering; not asserted tighter on a busy machine.
    expect(Date.now() - before).toBeGreaterThanOrEqual(900);
    const { operation_id, status } = structured<StartedResult>(result);
    expect(status).toBe('started');
    const push = await waitFor(
      () => server.messages.find((m) => pushedId(m) === operation_id),
      'the completion push',
    );
    expect(push.data).toMatchObject({ operation_id, status: 'completed', output: 'slow\n' });
  });

  it('SPEC §3 inline wait: --inline-wait 0 answers started at once, even for a command that ends at once', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope(), AT_ONCE);
    const result = await server.call('sandboxed_shell', { command: 'echo fast' });
    const started = structured<StartedResult>(result);
    expect(started).toEqual({
      operation_id: expect.stringMatching(/^op_/),
      status: 'started',
      tool: 'sandboxed_shell',
    });
    await waitFor(
      () => server.messages.find((m) => pushedId(m) === started.operation_id),
      'the completion push',
    );
  });

  it('SPEC §3 inline wait: AHMA_INLINE_WAIT=0 is the same as --inline-wait 0', async ({ e2e }) => {
    const scope = await e2e.scope();
    const server = await e2e.inProcess({ ...scope, env: { ...scope.env, AHMA_INLINE_WAIT: '0' } });
    const result = await server.call('e2e_async', { value: 'x' });
    expect(structured<StartedResult>(result).status).toBe('started');
  });

  it('SPEC §3 inline wait: the client cancelling the request during the inline wait kills the command', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope(), ['--inline-wait', '30']);
    const marker = uniqueMarker();
    const controller = new AbortController();
    const call = server.call(
      'sandboxed_shell',
      { command: `exec -a ${marker} sleep 300` },
      { request: { signal: controller.signal } },
    );
    const [running] = await waitFor(async () => {
      const found = await processesMatching(marker);
      return found.length > 0 ? found : undefined;
    }, 'the command to start');
    controller.abort('the test gave up');
    await expect(call).rejects.toThrow();
    await waitFor(
      async () => (await processesMatching(marker)).length === 0,
      'the command to be killed',
    );
    expect(running?.cmdline).toContain(marker);
    const [operation] = structured<Operations>(await server.call('status')).operations;
    expect(operation).toMatchObject({ tool: 'sandboxed_shell', status: 'cancelled' });
  });

  it('SPEC §3 inline wait: the initialize instructions state the inline wait the server uses', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const waiting = (await e2e.inProcess(scope, ['--inline-wait', '3'])).client.getInstructions();
    expect(waiting).toContain('when the command ends within 3 s');
    const atOnce = (await e2e.inProcess(scope, AT_ONCE)).client.getInstructions();
    expect(atOnce).not.toMatch(/ends within/);
    expect(atOnce).toContain('An asynchronous call answers at once with an operation_id');
  });

  it('R2.2: a request cancelled during the inline wait is never pushed, even when its command outlives the wait', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope(), ['--inline-wait', '1']);
    const marker = uniqueMarker();
    const controller = new AbortController();
    // Ignores SIGTERM: it dies only at the SIGKILL after the kill grace, after the inline wait.
    const call = server.call(
      'sandboxed_shell',
      { command: `trap '' TERM; exec -a ${marker} sleep 300` },
      { request: { signal: controller.signal } },
    );
    await waitFor(async () => (await processesMatching(marker)).length > 0, 'the command');
    controller.abort('the test gave up');
    await expect(call).rejects.toThrow();
    await waitFor(
      async () => (await processesMatching(marker)).length === 0,
      'the command to be killed',
    );
    // The processes vanish a moment before the supervisor's report of the kill is handled.
    const operation = await waitFor(async () => {
      const [found] = structured<Operations>(await server.call('status')).operations;
      return found?.status === 'running' ? undefined : found;
    }, 'the kill to be reported');
    expect(operation).toMatchObject({ status: 'cancelled' });
    await sleep(500);
    expect(server.messages.map(pushedId)).toEqual([]);
  });
});

describe.concurrent('completion pushes (R2.2)', { timeout: 60_000 }, () => {
  it('R2.2: a call answered started gets its completion as notifications/message: logger ahma, level info, data = the finished result', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope(), AT_ONCE);
    const { operation_id } = structured<StartedResult>(
      await server.call('sandboxed_shell', { command: 'sleep 0.3; echo pushed; exit 3' }),
    );
    const push = await waitFor(
      () => server.messages.find((m) => pushedId(m) === operation_id),
      'the completion push',
    );
    expect(push.level).toBe('info');
    expect(push.logger).toBe('ahma');
    expect(push.data).toEqual({
      operation_id,
      tool: 'sandboxed_shell',
      status: 'failed',
      exit_code: 3,
      output: 'pushed\n',
      truncated: false,
      duration_ms: expect.any(Number),
    });
    // The pushed result is the one await and status return.
    const awaited = structured<Operations>(await server.call('await', { ids: [operation_id] }));
    expect(awaited.operations).toEqual([push.data]);
    await sleep(300);
    expect(server.messages.filter((m) => pushedId(m) === operation_id)).toHaveLength(1);
  });

  it('R2.2: logging/setLevel warning suppresses completion messages, await still returns the result, info brings them back', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope(), AT_ONCE);
    await server.client.setLoggingLevel('warning');
    const quiet = structured<StartedResult>(
      await server.call('sandboxed_shell', { command: 'echo quiet' }),
    );
    const awaited = structured<Operations>(
      await server.call('await', { ids: [quiet.operation_id] }),
    );
    expect(awaited.operations).toEqual([
      expect.objectContaining({ operation_id: quiet.operation_id, output: 'quiet\n' }),
    ]);
    await server.client.setLoggingLevel('info');
    const loud = structured<StartedResult>(
      await server.call('sandboxed_shell', { command: 'echo loud' }),
    );
    await waitFor(
      () => server.messages.find((m) => pushedId(m) === loud.operation_id),
      'the push after setLevel info',
    );
    expect(server.messages.map(pushedId)).toEqual([loud.operation_id]);
  });

  it('R2.2: the server declares the logging capability', async ({ e2e }) => {
    const server = await e2e.inProcess(await e2e.scope());
    expect(server.client.getServerCapabilities()).toMatchObject({ logging: {} });
  });
});

describe.concurrent('progress only while a call is open (R3.3)', { timeout: 60_000 }, () => {
  it('R3.3: heartbeats during a synchronous call carry the elapsed time, grow, and stop before the response', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await fastHeartbeatScope(e2e));
    const result = await server.call(
      'sandboxed_shell',
      { command: 'sleep 1.5; echo done', execution_mode: 'Synchronous' },
      { progress: true },
    );
    const { operation_id } = structured<CommandResult>(result);
    expect(server.progress.length).toBeGreaterThanOrEqual(2);
    const values = server.progress.map((p) => p.progress);
    expect([...values].sort((a, b) => a - b)).toEqual(values);
    expect(new Set(values).size).toBe(values.length);
    expect(server.progress[0]?.message).toMatch(
      new RegExp(`^${operation_id} \\(sandboxed_shell\\) running for \\d+ s$`),
    );
    await sleep(500);
    expectNoProgressAfterResponses(server.received);
  });

  it('SPEC §12: a heartbeat carries the last line the command printed', async ({ e2e }) => {
    const server = await e2e.inProcess(await fastHeartbeatScope(e2e));
    const result = await server.call(
      'sandboxed_shell',
      { command: 'echo compiling; sleep 1.5; echo done', execution_mode: 'Synchronous' },
      { progress: true },
    );
    const { operation_id } = structured<CommandResult>(result);
    expect(server.progress.map((p) => p.message)).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^${operation_id} \\(sandboxed_shell\\) running for \\d+ s; last output: compiling$`,
        ),
      ),
    );
  });

  it('R3.3: the inline wait sends heartbeats, the started answer ends them, and the completion comes as a message', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await fastHeartbeatScope(e2e), ['--inline-wait', '1']);
    const result = await server.call(
      'sandboxed_shell',
      { command: 'sleep 2; echo later' },
      { progress: true },
    );
    const id = lastRequestId(server);
    const { operation_id } = structured<StartedResult>(result);
    expect(progressOf(server, id).length).toBeGreaterThanOrEqual(1);
    await waitFor(
      () => server.messages.find((m) => pushedId(m) === operation_id),
      'the completion push',
    );
    await sleep(300);
    expectNoProgressAfterResponses(server.received);
    expect(progressOf(server, id)).toHaveLength(server.progress.length);
  });

  it('R2.3/R3.3: await sends heartbeats while it waits when the call has a progress token', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await fastHeartbeatScope(e2e), AT_ONCE);
    const { operation_id } = structured<StartedResult>(
      await server.call('sandboxed_shell', { command: 'sleep 1.5; echo awaited' }),
    );
    const result = await server.call('await', { ids: [operation_id] }, { progress: true });
    expect(structured<Operations>(result).operations).toEqual([
      expect.objectContaining({ operation_id, status: 'completed', output: 'awaited\n' }),
    ]);
    expect(server.progress.length).toBeGreaterThanOrEqual(2);
    expect(server.progress[0]?.message).toMatch(new RegExp(`^waiting for ${operation_id} \\(`));
    await sleep(300);
    expectNoProgressAfterResponses(server.received);
  });

  it('R3.3: a call without a progress token gets no progress at all', async ({ e2e }) => {
    const server = await e2e.inProcess(await fastHeartbeatScope(e2e));
    await server.call('sandboxed_shell', {
      command: 'sleep 0.6',
      execution_mode: 'Synchronous',
    });
    expect(server.received.filter(({ message }) => isProgress(message))).toEqual([]);
  });

  it('R3.3: over raw stdio with a string token, no progress follows the response; the completion follows as a message', async ({
    e2e,
  }) => {
    const session = new RawSession(e2e, await fastHeartbeatScope(e2e), ['--inline-wait', '0.5']);
    await session.initialize();
    const response = await session.request(1, 'tools/call', {
      name: 'sandboxed_shell',
      arguments: { command: 'sleep 1.5; echo raw' },
      _meta: { progressToken: 'raw-token' },
    });
    const operationId = (response['result'] as { structuredContent: StartedResult })
      .structuredContent.operation_id;
    const messages = () =>
      session.stdoutLines.map((line) => JSON.parse(line) as Record<string, unknown>);
    await waitFor(
      () => messages().some((m) => m['method'] === 'notifications/message'),
      'the completion message',
    );
    await sleep(300);
    const all = messages();
    const answeredAt = all.findIndex((m) => m['id'] === 1);
    const progressAt = all
      .map((m, index) => (m['method'] === 'notifications/progress' ? index : -1))
      .filter((index) => index !== -1);
    expect(progressAt.length).toBeGreaterThanOrEqual(1);
    expect(Math.max(...progressAt)).toBeLessThan(answeredAt);
    expect(all.find((m) => m['method'] === 'notifications/message')).toMatchObject({
      params: {
        level: 'info',
        logger: 'ahma',
        data: { operation_id: operationId, output: 'raw\n' },
      },
    });
  });
});

describe.concurrent('execution_mode (R10.1)', { timeout: 60_000 }, () => {
  it('R10.1: execution_mode "Synchronous" makes an async tool block; it is never passed to the command', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope(), AT_ONCE);
    const shell = await server.call('sandboxed_shell', {
      command: 'sleep 0.5; echo blocked',
      execution_mode: 'Synchronous',
    });
    expect(structured<CommandResult>(shell)).toMatchObject({
      status: 'completed',
      output: 'blocked\n',
    });
    // e2e_async prints every argument it gets: execution_mode is not one of them.
    const echo = await server.call('e2e_async', { value: 'v', execution_mode: 'Synchronous' });
    expect(structured<CommandResult>(echo).output).toBe('async\n--value\nv\n');
    await sleep(300);
    expect(server.messages).toEqual([]);
  });

  it('R10.1: execution_mode "AsyncResultPush" runs a synchronous tool in the background, with a push', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope(), AT_ONCE);
    const result = await server.call('argv', { text: 'x', execution_mode: 'AsyncResultPush' });
    const { operation_id, status } = structured<StartedResult>(result);
    expect(status).toBe('started');
    const push = await waitFor(
      () => server.messages.find((m) => pushedId(m) === operation_id),
      'the completion push',
    );
    expect(JSON.parse((push.data as CommandResult).output)).toEqual(['--text', 'x']);
  });

  it('R10.1: an unknown execution_mode is a tool error naming the field, and nothing runs', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const result = await server.call('sandboxed_shell', {
      command: 'true',
      execution_mode: 'sync',
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('execution_mode');
    expect(structured<Operations>(await server.call('status')).operations).toEqual([]);
  });

  it('R10.1: every command tool declares execution_mode; status, await, cancel, output, write_stdin and activate_tools do not', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const { tools } = await server.client.listTools();
    for (const tool of tools) {
      const declared = Object.keys(tool.inputSchema.properties ?? {}).includes('execution_mode');
      expect(declared, tool.name).toBe(
        !['status', 'await', 'cancel', 'output', 'write_stdin', 'activate_tools'].includes(
          tool.name,
        ),
      );
    }
  });
});
