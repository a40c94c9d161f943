// The 2026-07-28 era (SPEC §12, docs/decisions/0001) beside the 2025 ones: server/discover, the
// per-request `_meta` envelope, subscriptions/listen, and SEP-2663 tasks. Driven by clients nobody
// here wrote: the SDK v2 client (pinned 2026-07-28, or negotiating automatically) and
// @modelcontextprotocol/ext-tasks as the SEP-2663 client, over the real binary's stdio and the real
// HTTP server; raw JSON-RPC where the wire itself is the point. Real processes throughout.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
  type JsonRpcResponse,
  type RawClientDispatch,
} from '@modelcontextprotocol/ext-tasks/client';
import { describe, expect } from 'vitest';
import {
  it,
  processesMatching,
  RawSession,
  uniqueMarker,
  waitFor,
  type E2E,
  type Scope,
} from '../../support/harness.js';
import { httpBinary, httpServer, post } from '../../support/http.js';
import { watchHeavyModules } from '../../support/heavy-modules.js';
import { MODERN, modernStdioClient } from '../../support/modern-client.js';

const TASKS = 'io.modelcontextprotocol/tasks';

/** The per-request envelope of a 2026-07-28 request, opting into tasks or not. */
function envelope(tasks: boolean) {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { [TASKS]: {} } } : {},
  };
}

/** The SDK v2 client over the real binary's stdio, pinned to 2026-07-28 or negotiating. */
const stdioClient = (
  e2e: E2E,
  scope: Scope,
  args: readonly string[],
  mode: 'pin' | 'auto' = 'pin',
  env: Record<string, string> = {},
) => modernStdioClient(e2e, scope, args, mode, env);

/** The SDK v2 client over HTTP, and an ext-tasks session on it (its raw path is plain fetch). */
async function httpTaskClient(e2e: E2E, url: string) {
  const client = new Client(
    { name: 'ext-tasks-host', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: MODERN } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  e2e.onCleanup(() => client.close());
  let next = 0;
  // The SDK client's own codec refuses `resultType: "task"`: ext-tasks sends through this.
  const rawDispatch: RawClientDispatch = async (raw, options = {}) => {
    const request = raw as { method: string; params?: Record<string, unknown> };
    const headers: Record<string, string> = {
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': request.method,
      ...options.context?.headers,
    };
    const name = request.params?.['name'];
    if (request.method === 'tools/call' && typeof name === 'string') headers['mcp-name'] = name;
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: `raw-${String(++next)}`, ...request }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    const message = (await response.json()) as Record<string, unknown>;
    // The JSON-RPC response, as the port's shape: its result, or its error.
    return (
      'error' in message
        ? { kind: 'error', error: message['error'] }
        : { kind: 'result', result: message['result'] ?? {} }
    ) as JsonRpcResponse;
  };
  const session = createTaskSessionFromClient(client, {
    endpointId: 'ahma',
    rawDispatch,
    v2RequestFraming: {
      protocolVersion: MODERN,
      clientInfo: { name: 'ext-tasks-host', version: '1.0.0' },
      clientCapabilities: {},
    },
  });
  e2e.onCleanup(() => session.close());
  return { client, session };
}

/** A raw 2026-07-28 request over HTTP, answered as JSON. */
async function rawModern(
  url: string,
  id: number,
  method: string,
  params: object,
  tasks = true,
  headers: Record<string, string> = {},
) {
  // The era's HTTP headers mirror the body (SEP-2243): the method, and the tool or task named.
  const named = params as { name?: unknown; taskId?: unknown };
  const name = named.name ?? named.taskId;
  const response = await post(
    url,
    { jsonrpc: '2.0', id, method, params: { ...params, _meta: envelope(tasks) } },
    {
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
      ...headers,
    },
  );
  return {
    status: response.status,
    body: (await response.json()) as {
      result?: Record<string, unknown>;
      error?: { code: number; message: string; data?: Record<string, unknown> };
    },
  };
}

describe.concurrent('the 2026-07-28 era', { timeout: 60_000 }, () => {
  it("SPEC §12: over stdio a 2026-07-28 client discovers the server: tools and the tasks extension, no 2025 tasks capability, this era's guidance", async ({
    e2e,
  }) => {
    const client = await stdioClient(e2e, await e2e.scope(), []);
    expect(client.getProtocolEra()).toBe('modern');
    const capabilities = client.getServerCapabilities();
    expect(capabilities?.extensions).toEqual({ [TASKS]: {} });
    expect(capabilities).not.toHaveProperty('tasks');
    expect(client.getInstructions()).toContain('becomes a task');
    const { tools } = await client.listTools();
    const shell = tools.find((tool) => tool.name === 'sandboxed_shell');
    expect(shell?.description).toContain('becomes a task whose result your client fetches');
    expect(shell?.description).not.toContain('notifications/message');
  });

  it('SPEC §12: a 2026-07-28 call without the tasks extension stays open until its command ends, with progress, and never answers `started`', async ({
    e2e,
  }) => {
    const client = await stdioClient(e2e, await e2e.scope(), ['--inline-wait', '0'], 'pin', {
      AHMA_TEST_HEARTBEAT_MS: '200',
    });
    const progress: string[] = [];
    const result = await client.callTool(
      { name: 'sandboxed_shell', arguments: { command: 'echo first; sleep 1.2; echo kept-open' } },
      { onprogress: (update) => progress.push(update.message ?? '') },
    );
    expect(result.structuredContent).toMatchObject({ status: 'completed', exit_code: 0 });
    expect(JSON.stringify(result.content)).toContain('kept-open');
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.some((message) => message.includes('last output: first'))).toBe(true);
  });

  it('SPEC §12: one binary serves both eras: a client negotiating automatically and a 2025 initialize each get theirs; only the first loads the SDK v2', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const modern = watchHeavyModules(scope, 'modern');
    const auto = await stdioClient(e2e, scope, [], 'auto', modern.env);
    expect(auto.getProtocolEra()).toBe('modern');
    const old = watchHeavyModules(scope, 'legacy');
    const legacy = new RawSession(e2e, { ...scope, env: { ...scope.env, ...old.env } }, []);
    const answer = await legacy.request(1, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'raw-2025', version: '1.0.0' },
    });
    expect(answer['result']).toMatchObject({
      protocolVersion: '2025-11-25',
      capabilities: { tasks: { requests: { tools: { call: {} } } } },
    });
    expect((await legacy.request(2, 'tools/list', {}))['result']).toHaveProperty('tools');
    await legacy.end();
    // The 2025 server answers without it: a tenth of a start's CPU (docs/decisions/0001).
    expect(await old.loaded()).toBe('');
    expect(await modern.loaded()).toMatch(/^sdk-v2 .*dist\/chunk-/m);
  });

  it('SPEC §12: SEP-2663 over stdio, raw: an opted-in long call is a task, tasks/get inlines its result, and without the opt-in tasks/* are refused with -32021', async ({
    e2e,
  }) => {
    const raw = new RawSession(e2e, await e2e.scope(), ['--inline-wait', '0']);
    const call = (id: number, method: string, params: object, tasks = true) =>
      raw.request(id, method, { ...params, _meta: envelope(tasks) });
    expect((await call(1, 'server/discover', {}))['result']).toMatchObject({
      supportedVersions: [MODERN],
    });
    const created = (
      await call(2, 'tools/call', {
        name: 'sandboxed_shell',
        arguments: { command: 'sleep 0.3; echo from-task' },
      })
    )['result'] as Record<string, unknown>;
    expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: 3_600_000 });
    expect(created).not.toHaveProperty('task');
    const taskId = created['taskId'] as string;
    const done = await waitFor(async () => {
      const got = (await call(Date.now(), 'tasks/get', { taskId }))['result'] as {
        status: string;
        result?: { structuredContent?: { output?: string }; resultType?: string };
      };
      return got.status === 'completed' ? got : undefined;
    }, 'the task to complete');
    expect(done.result).toMatchObject({ resultType: 'complete' });
    expect(done.result?.structuredContent?.output).toBe('from-task\n');
    const refused = await call(3, 'tasks/get', { taskId }, false);
    expect(refused['error']).toMatchObject({ code: -32021 });
    expect((await call(4, 'tasks/get', { taskId: 'op_none' }))['error']).toMatchObject({
      code: -32602,
    });
    expect((await call(5, 'tasks/result', { taskId }))['error']).toMatchObject({ code: -32601 });
    await raw.end();
  });
});

describe.concurrent(
  'SEP-2663 tasks over HTTP with @modelcontextprotocol/ext-tasks',
  { timeout: 60_000 },
  () => {
    it('SPEC §12: a long command becomes a task and its output arrives through tasks/get; a failing one is completed with isError', async ({
      e2e,
    }) => {
      const { url } = await httpServer(e2e, await e2e.scope(), ['--inline-wait', '0']);
      const { session } = await httpTaskClient(e2e, url);
      const execution = await session.callTool('sandboxed_shell', {
        command: 'sleep 0.5; echo via-ext-tasks',
      });
      expect(execution.kind).toBe('task');
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe('completed');
      expect(JSON.stringify(resultFromTaskOutcome(outcome).content)).toContain('via-ext-tasks');
      const failing = await (
        await session.callTool('sandboxed_shell', { command: 'exit 3' })
      ).settle();
      expect(failing.outcome.status).toBe('completed');
      expect(resultFromTaskOutcome(failing.outcome).isError).toBe(true);
    });

    it('SPEC §12: tasks/cancel kills the command: its processes are gone from /proc and the task is cancelled', async ({
      e2e,
    }) => {
      const { url } = await httpServer(e2e, await e2e.scope(), ['--inline-wait', '0']);
      const { session } = await httpTaskClient(e2e, url);
      const marker = uniqueMarker();
      const execution = await session.callTool('sandboxed_shell', {
        // exec -a: the process's name carries the marker (a warm shell's command line does not).
        command: `exec -a ${marker} sleep 60`,
      });
      expect(execution.kind).toBe('task');
      await waitFor(async () => (await processesMatching(marker)).length > 0, 'the command to run');
      await execution.cancel();
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe('cancelled');
      expect(await processesMatching(marker)).toEqual([]);
    });

    it('SPEC §12: twenty concurrent tasks each deliver their own output', async ({ e2e }) => {
      const { url } = await httpServer(e2e, await e2e.scope(), ['--inline-wait', '0']);
      const { session } = await httpTaskClient(e2e, url);
      const executions = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          session.callTool('sandboxed_shell', { command: `sleep 0.3; echo task-${String(index)}` }),
        ),
      );
      expect(executions.every((execution) => execution.kind === 'task')).toBe(true);
      const outcomes = await Promise.all(executions.map((execution) => execution.settle()));
      outcomes.forEach(({ outcome }, index) => {
        expect(outcome.status, JSON.stringify(outcome)).toBe('completed');
        expect(JSON.stringify(resultFromTaskOutcome(outcome).content)).toContain(
          `task-${String(index)}\\n`,
        );
      });
    });

    it('SPEC §12: a request without the opt-in gets no task but the finished result; tasks/* without it are -32021, an unknown task -32602', async ({
      e2e,
    }) => {
      const { url } = await httpServer(e2e, await e2e.scope(), ['--inline-wait', '0']);
      const plain = await rawModern(
        url,
        1,
        'tools/call',
        { name: 'sandboxed_shell', arguments: { command: 'sleep 0.3; echo no-task' } },
        false,
      );
      expect(plain.body.result).toMatchObject({ resultType: 'complete', isError: false });
      expect(JSON.stringify(plain.body.result)).toContain('no-task');
      expect(
        (await rawModern(url, 2, 'tasks/get', { taskId: 'op_x' }, false)).body.error,
      ).toMatchObject({ code: -32021 });
      expect(
        (await rawModern(url, 3, 'tasks/cancel', { taskId: 'op_x' })).body.error,
      ).toMatchObject({
        code: -32602,
      });
    });

    it('SPEC §12: subscriptions/listen hears tools/list_changed when a bundle is revealed', async ({
      e2e,
    }) => {
      const { url } = await httpServer(e2e, await e2e.scope(), []);
      const { client } = await httpTaskClient(e2e, url);
      let changed = 0;
      client.setNotificationHandler('notifications/tools/list_changed', () => {
        changed += 1;
      });
      const subscription = await client.listen({ toolsListChanged: true });
      e2e.onCleanup(() => subscription.close());
      const bundles = await client.callTool({
        name: 'activate_tools',
        arguments: { action: 'list' },
      });
      const bundle = (bundles.structuredContent as { bundles?: { name: string }[] }).bundles?.[0]
        ?.name;
      expect(bundle).toBeDefined();
      await client.callTool({ name: 'activate_tools', arguments: { action: 'reveal', bundle } });
      await waitFor(() => changed > 0, 'notifications/tools/list_changed on the listen stream');
    });

    it('SPEC §12: with --session-isolation the sessionless era is refused as an unsupported version, and an automatic client falls back to a 2025 session', async ({
      e2e,
    }) => {
      const { url, headers } = await httpBinary(e2e, await e2e.scope(), ['--session-isolation']);
      const refused = await rawModern(url, 1, 'server/discover', {}, true, headers);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: -32022 });
      expect(refused.body.error?.data?.['supported']).toContain('2025-11-25');
      const client = new Client(
        { name: 'auto', version: '1.0.0' },
        { versionNegotiation: { mode: 'auto' } },
      );
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
      );
      e2e.onCleanup(() => client.close());
      expect(client.getProtocolEra()).toBe('legacy');
      // The session it fell back to is served, by its own process.
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    });

    it('R8B: with --log-to-stderr the 2026-07-28 traffic is echoed: the request, and its JSON answer', async ({
      e2e,
    }) => {
      const { url, stderr } = await httpServer(e2e, await e2e.scope(), ['--log-to-stderr']);
      await rawModern(url, 7, 'server/discover', {});
      const echoed = stderr();
      expect(echoed).toMatch(
        /→ STDIN: \{\n {2}"jsonrpc": "2.0",\n {2}"id": 7,\n {2}"method": "server\/discover"/,
      );
      expect(echoed).toMatch(/← STDOUT: \{[\s\S]*"supportedVersions": \[\n\s+"2026-07-28"/);
    });
  },
);
