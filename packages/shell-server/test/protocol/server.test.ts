// One runtime, a server per connection (docs/architecture.md): connections over one runtime each
// get their own completion pushes, every connection hears tools/list_changed, and a closed
// connection leaves nothing subscribed behind. The real runtime and sandbox; the SDK's real Client
// over InMemoryTransport.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import { describe, expect } from 'vitest';
import { createMcpServer } from '../../src/protocol/server.js';
import { parseCommandLine } from '../../src/cli/options.js';
import { createRuntime, type Runtime } from '../../src/runtime/runtime.js';
import {
  exists,
  it,
  processesMatching,
  pushedId,
  sleep,
  structured,
  uniqueMarker,
  waitFor,
  type E2E,
  type Scope,
} from '../support/harness.js';

/** A runtime on `scope`, closed at the test's cleanup. */
async function runtimeFor(e2e: E2E, scope: Scope, args: readonly string[] = []): Promise<Runtime> {
  const parsed = parseCommandLine(
    ['--mode', 'stdio', '--sandbox-scope', scope.dir, ...args],
    scope.env,
  );
  if (parsed.kind !== 'run') throw new Error('bad command line');
  const runtime = await createRuntime({
    options: parsed.options,
    env: scope.env,
    cwd: scope.dir,
    logger: pino({ level: 'silent' }),
  });
  e2e.onCleanup(() => runtime.close());
  return runtime;
}

interface Connected {
  readonly client: Client;
  readonly messages: LoggingMessageNotification['params'][];
  listChanged: number;
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
}

async function connect(runtime: Runtime): Promise<Connected> {
  const connection = createMcpServer(runtime);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await connection.server.connect(serverSide);
  const client = new Client({ name: 'connection-test', version: '1.0.0' });
  await client.connect(clientSide);
  const connected: Connected = {
    client,
    messages: [],
    listChanged: 0,
    call: async (name, args) =>
      (await client.callTool({ name, arguments: args })) as CallToolResult,
  };
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    connected.messages.push(n.params);
  });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    connected.listChanged += 1;
  });
  return connected;
}

/** The runtime with its subscription points counted: what a connection takes and gives back. */
function counted(runtime: Runtime): { runtime: Runtime; live: () => number } {
  let live = 0;
  const track =
    <A extends unknown[]>(subscribe: (...args: A) => () => unknown) =>
    (...args: A) => {
      const unsubscribe = subscribe(...args);
      live += 1;
      let done = false;
      return () => {
        if (!done) live -= 1;
        done = true;
        unsubscribe();
      };
    };
  const operations = runtime.engine.operations;
  const engine = {
    ...runtime.engine,
    operations: Object.assign(Object.create(operations) as typeof operations, {
      onComplete: track(operations.onComplete.bind(operations)),
      onAlert: track(operations.onAlert.bind(operations)),
      ownerEnded: operations.ownerEnded.bind(operations),
    }),
  };
  return {
    runtime: {
      engine,
      logger: runtime.logger,
      instructions: runtime.instructions,
      modernInstructions: runtime.modernInstructions,
      claudeChannel: runtime.claudeChannel,
      get tools() {
        return runtime.tools;
      },
      remotesListed: () => runtime.remotesListed(),
      onToolsChanged: track(runtime.onToolsChanged.bind(runtime)),
      close: () => runtime.close(),
    },
    live: () => live,
  };
}

describe.concurrent(
  'createMcpServer: a server per connection over one runtime',
  { timeout: 60_000 },
  () => {
    it('SPEC §3: each connection gets the completion pushes of its own calls only', async ({
      e2e,
    }) => {
      const runtime = await runtimeFor(e2e, await e2e.scope(), ['--inline-wait', '0']);
      const [a, b] = [await connect(runtime), await connect(runtime)];
      const started = structured<{ operation_id: string }>(
        await a.call('sandboxed_shell', { command: 'echo from-a' }),
      );
      await waitFor(() => a.messages.some((m) => pushedId(m) === started.operation_id), 'the push');
      await sleep(200);
      expect(b.messages).toEqual([]);
      // The other connection still sees the operation: operations belong to the runtime.
      const status = structured<{ operations: { operation_id: string }[] }>(
        await b.call('status', { ids: [started.operation_id] }),
      );
      expect(status.operations.map((o) => o.operation_id)).toEqual([started.operation_id]);
    });

    it('SPEC §6 hot reload: every open connection is told the tools changed', async ({ e2e }) => {
      const scope = await e2e.scope({ noTools: true });
      const runtime = await runtimeFor(e2e, scope);
      const [a, b] = [await connect(runtime), await connect(runtime)];
      await writeFile(
        join(scope.dir, '.ahma', 'tools', 'hello.json'),
        JSON.stringify({ name: 'hello', description: 'Say hello.', command: 'echo hello' }),
      );
      await waitFor(() => a.listChanged > 0 && b.listChanged > 0, 'tools/list_changed on both');
      expect((await b.client.listTools()).tools.map((t) => t.name)).toContain('hello');
    });

    it('issue 12: closing a connection, or its client going away, releases everything it subscribed to', async ({
      e2e,
    }) => {
      const observed = counted(await runtimeFor(e2e, await e2e.scope()));
      const byServer = createMcpServer(observed.runtime);
      expect(observed.live()).toBeGreaterThan(0);
      await byServer.close();
      expect(observed.live()).toBe(0);

      const byClient = createMcpServer(observed.runtime);
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await byClient.server.connect(serverSide);
      const client = new Client({ name: 'connection-test', version: '1.0.0' });
      await client.connect(clientSide);
      expect(observed.live()).toBeGreaterThan(0);
      await client.close();
      await waitFor(() => observed.live() === 0, 'the subscriptions to be released');
    });

    it('R8.4: closing a connection kills the operations it started that still run, and only those', async ({
      e2e,
    }) => {
      const runtime = await runtimeFor(e2e, await e2e.scope(), ['--inline-wait', '0']);
      const mine = createMcpServer(runtime);
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await mine.server.connect(serverSide);
      const client = new Client({ name: 'connection-test', version: '1.0.0' });
      await client.connect(clientSide);
      const other = await connect(runtime);
      const marker = uniqueMarker();
      // Both run at once (two writers of one workspace would take turns: SPEC §14 lanes).
      const sleeper = (who: string) => ({
        command: `exec -a ${marker}-${who} sleep 300`,
        concurrency: 'service',
      });
      const started = (result: unknown) =>
        structured<{ operation_id: string }>(result as CallToolResult).operation_id;
      const myId = started(
        await client.callTool({ name: 'sandboxed_shell', arguments: sleeper('mine') }),
      );
      const otherId = started(await other.call('sandboxed_shell', sleeper('other')));
      const [mineProcess] = await waitFor(async () => {
        const found = await processesMatching(`${marker}-mine`);
        return found.length > 0 && (await processesMatching(`${marker}-other`)).length > 0 && found;
      }, 'both commands to run');
      expect(mine.runningOperations()).toBe(1);

      await mine.close();
      // By the time close() resolves the command is dead and its operation says why.
      expect(mineProcess !== undefined && exists(mineProcess.pid)).toBe(false);
      expect(await processesMatching(`${marker}-mine`)).toEqual([]);
      const [mineStatus, otherStatus] = runtime.engine.operations.status([myId, otherId]);
      expect(mineStatus?.status).toBe('cancelled');
      expect(otherStatus?.status).toBe('running');
      expect(await processesMatching(`${marker}-other`)).toHaveLength(1);
    });
  },
);
