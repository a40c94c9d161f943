// A client aborting a call kills the command's whole process tree in every era and transport
// (SPEC §3, §12; issue 28 gap 10). What reaches the server when the SDK v2 client aborts:
// - 2026-07-28 over HTTP: the request's stream closes; no notifications/cancelled is sent (the
//   spec's signal, since the client has per-request streams). A transport without them POSTs
//   notifications/cancelled instead (as the v2 client did before), which reaches no server that
//   knows the request unless the endpoint routes it: both are tested;
// - 2026-07-28 over stdio: notifications/cancelled;
// - 2025 over HTTP (a 2025 client, or the v2 client falling back under --session-isolation):
//   notifications/cancelled in the session, through the session's own process when isolated.
// A call that became a task outlives its request. The real clients, the real server (in this
// process or the built binary), the real sandbox; processes found in /proc by a marker in argv.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it, type TestContext } from 'vitest';
import {
  E2E,
  processesMatching,
  uniqueMarker,
  waitFor,
  type ProcessInfo,
} from '../../../support/harness.js';
import { httpBinary, httpClient, httpServer, post } from '../../../support/http.js';
import { MODERN, modernStdioClient } from '../../../support/modern-client.js';

/** A fresh E2E for one concurrent test, cleaned up when it ends. */
function setup(context: TestContext): E2E {
  const e2e = new E2E();
  context.onTestFinished(() => e2e.cleanup());
  return e2e;
}

/** A command whose main process and a grandchild in a session of its own both sleep. */
function treeCommand(marker: string): string {
  return [
    `setsid bash -c 'exec -a ${marker}-grandchild sleep 300' </dev/null >/dev/null 2>&1 &`,
    `exec -a ${marker}-child sleep 300`,
  ].join('\n');
}

/** Waits until both processes of treeCommand run. */
function treeRunning(marker: string): Promise<ProcessInfo[]> {
  return waitFor(async () => {
    const found = await processesMatching(marker);
    return found.length === 2 ? found : undefined;
  }, `the processes marked ${marker}`);
}

/** Waits until no process of treeCommand is left. */
async function treeGone(marker: string): Promise<void> {
  await waitFor(
    async () => (await processesMatching(marker)).length === 0,
    `every process marked ${marker} to be killed`,
    10_000,
  );
}

/** The SDK v2 client pinned to 2026-07-28 over `transport`, closed at cleanup. */
async function modernHttpClient(
  e2e: E2E,
  transport: StreamableHTTPClientTransport,
): Promise<Client> {
  const client = new Client(
    { name: 'v2-abort', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: MODERN } } },
  );
  await client.connect(transport);
  e2e.onCleanup(() => client.close());
  return client;
}

/** Calls sandboxed_shell with `command` under `signal`; the promise rejects once aborted. */
function abortableCall(client: Client, command: string, signal: AbortSignal) {
  return client.callTool({ name: 'sandboxed_shell', arguments: { command } }, { signal });
}

const ENVELOPE = (client: string, tasks = false) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: client, version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': tasks
    ? { extensions: { 'io.modelcontextprotocol/tasks': {} } }
    : {},
});

/** A raw 2026-07-28 POST (the era's headers mirror the body). */
function modernPost(url: string, message: { method: string; params: object }, id?: number) {
  const named = message.params as { name?: unknown; taskId?: unknown };
  const name = named.name ?? named.taskId;
  return post(
    url,
    { jsonrpc: '2.0', ...(id === undefined ? {} : { id }), ...message },
    {
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': message.method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    },
  );
}

/** notifications/cancelled for request `id`, as `client` sends it. */
const cancelled = (client: string, id: number) => ({
  method: 'notifications/cancelled',
  params: { requestId: id, reason: 'the test gives up', _meta: ENVELOPE(client) },
});

describe.concurrent('an aborted call kills its command', () => {
  it('SPEC §12: the SDK v2 client aborting a 2026-07-28 call over HTTP closes its stream (no notifications/cancelled), and the whole process tree dies', async (context) => {
    const e2e = setup(context);
    const { url, stderr } = await httpServer(e2e, await e2e.scope(), [
      '--inline-wait',
      '0',
      '--log-to-stderr',
    ]);
    const client = await modernHttpClient(e2e, new StreamableHTTPClientTransport(new URL(url)));
    const marker = uniqueMarker();
    const controller = new AbortController();
    const call = abortableCall(client, treeCommand(marker), controller.signal);
    await treeRunning(marker);
    controller.abort('the test gives up');
    await expect(call).rejects.toThrow();
    await treeGone(marker);
    // R8B's echo shows every message the server received: the call, never a cancellation.
    expect(stderr()).toContain('"method": "tools/call"');
    expect(stderr()).not.toContain('notifications/cancelled');
  });

  it('SPEC §12: a 2026-07-28 client that POSTs notifications/cancelled instead (a transport without per-request streams) has the command killed too', async (context) => {
    const e2e = setup(context);
    const { url, stderr } = await httpServer(e2e, await e2e.scope(), [
      '--inline-wait',
      '0',
      '--log-to-stderr',
    ]);
    const transport = new StreamableHTTPClientTransport(new URL(url));
    // What the SDK v2 client did before it learnt per-request streams, and does still over a
    // transport without them: its protocol layer then cancels with notifications/cancelled.
    (transport as { hasPerRequestStream?: boolean }).hasPerRequestStream = false;
    const client = await modernHttpClient(e2e, transport);
    const marker = uniqueMarker();
    const controller = new AbortController();
    const call = abortableCall(client, treeCommand(marker), controller.signal);
    await treeRunning(marker);
    controller.abort('the test gives up');
    await expect(call).rejects.toThrow();
    await waitFor(
      () => stderr().includes('"method": "notifications/cancelled"'),
      'the notifications/cancelled POST',
    );
    await treeGone(marker);
  });

  it("SPEC §3: a 2026-07-28 notifications/cancelled never kills another client's call of the same id, and its own client's kills it", async (context) => {
    const e2e = setup(context);
    const { url } = await httpServer(e2e, await e2e.scope(), ['--inline-wait', '0']);
    const marker = uniqueMarker();
    const call = modernPost(
      url,
      {
        method: 'tools/call',
        params: {
          name: 'sandboxed_shell',
          arguments: { command: treeCommand(marker) },
          _meta: ENVELOPE('owner'),
        },
      },
      7,
    );
    const tree = await treeRunning(marker);
    expect((await modernPost(url, cancelled('stranger', 7))).status).toBe(202);
    expect((await modernPost(url, cancelled('owner', 8))).status).toBe(202);
    // Both notifications were handled before their 202: neither named the call.
    expect((await processesMatching(marker)).map((info) => info.pid).sort()).toEqual(
      tree.map((info) => info.pid).sort(),
    );
    expect((await modernPost(url, cancelled('owner', 7))).status).toBe(202);
    await treeGone(marker);
    // The call ends without a JSON-RPC answer: it was cancelled.
    expect((await call).status).toBe(499);
  });

  it('SPEC §12: a 2026-07-28 call that became a task outlives its request: a later notifications/cancelled of its id kills nothing', async (context) => {
    const e2e = setup(context);
    const { url } = await httpServer(e2e, await e2e.scope(), ['--inline-wait', '0']);
    const marker = uniqueMarker();
    const created = await modernPost(
      url,
      {
        method: 'tools/call',
        params: {
          name: 'sandboxed_shell',
          arguments: { command: treeCommand(marker) },
          _meta: ENVELOPE('tasks-client', true),
        },
      },
      3,
    );
    const task = (await created.json()) as { result?: { resultType?: string; taskId?: string } };
    expect(task.result?.resultType).toBe('task');
    const tree = await treeRunning(marker);
    expect((await modernPost(url, cancelled('tasks-client', 3))).status).toBe(202);
    const status = await modernPost(
      url,
      {
        method: 'tasks/get',
        params: { taskId: task.result?.taskId, _meta: ENVELOPE('tasks-client', true) },
      },
      4,
    );
    expect(((await status.json()) as { result?: { status?: string } }).result?.status).toBe(
      'working',
    );
    expect((await processesMatching(marker)).length).toBe(tree.length);
  });

  it('SPEC §12: over stdio the SDK v2 client aborting a 2026-07-28 call (notifications/cancelled) kills the process tree', async (context) => {
    const e2e = setup(context);
    const client = await modernStdioClient(e2e, await e2e.scope(), ['--inline-wait', '0']);
    const marker = uniqueMarker();
    const controller = new AbortController();
    const call = abortableCall(client, treeCommand(marker), controller.signal);
    await treeRunning(marker);
    controller.abort('the test gives up');
    await expect(call).rejects.toThrow();
    await treeGone(marker);
  });

  it('SPEC §3, R8D: with --session-isolation the SDK v2 client falls back to a 2025 session, and its abort reaches the session process and kills the process tree', async (context) => {
    const e2e = setup(context);
    const { url, headers } = await httpBinary(e2e, await e2e.scope(), [
      '--session-isolation',
      '--sync',
    ]);
    const client = new Client(
      { name: 'v2-auto', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
    );
    e2e.onCleanup(() => client.close());
    expect(client.getProtocolEra()).toBe('legacy');
    const marker = uniqueMarker();
    const controller = new AbortController();
    const call = abortableCall(client, treeCommand(marker), controller.signal);
    await treeRunning(marker);
    controller.abort('the test gives up');
    await expect(call).rejects.toThrow();
    await treeGone(marker);
  });

  it('SPEC §3: a 2025 Streamable HTTP client aborting a call (notifications/cancelled in its session) kills the process tree', async (context) => {
    const e2e = setup(context);
    const http = await httpServer(e2e, await e2e.scope(), ['--sync']);
    const server = await httpClient(e2e, http.url, http);
    const marker = uniqueMarker();
    const controller = new AbortController();
    const call = server.call(
      'sandboxed_shell',
      { command: treeCommand(marker) },
      { request: { signal: controller.signal } },
    );
    await treeRunning(marker);
    controller.abort('the test gives up');
    await expect(call).rejects.toThrow();
    await treeGone(marker);
  });
});
