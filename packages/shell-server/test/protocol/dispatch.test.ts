// Both eras serve tools/list and tools/call through one dispatch (protocol/dispatch.ts): over one
// runtime, the 2025 server (SDK v1) and the 2026-07-28 one (SDK v2) list the same tools in the
// same order, refuse a tool nobody offered with the same -32602, and answer a refused call with
// the same tool error. Driven by each era's real SDK client, in this process (InMemoryTransport).
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { InMemoryTransport as ModernMemoryTransport } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it, type TestContext } from 'vitest';
import { RpcCode } from '../../src/jsonrpc/codes.js';
import { createModernServer } from '../../src/protocol/modern/server.js';
import { createMcpServer } from '../../src/protocol/server.js';
import { OperationTaskStore } from '../../src/protocol/tasks.js';
import { E2E } from '../support/harness.js';
import { MODERN } from '../support/modern-client.js';

/** One runtime, and a client of each era connected to its own server over it. */
async function bothEras(context: TestContext) {
  const e2e = new E2E();
  context.onTestFinished(() => e2e.cleanup());
  const scope = await e2e.scope();
  const { runtime } = await e2e.runtime(scope, ['--mode', 'stdio']);

  const connection = createMcpServer(runtime);
  const [legacySide, legacyServerSide] = InMemoryTransport.createLinkedPair();
  await connection.server.connect(legacyServerSide);
  const legacy = new Client({ name: 'era-2025', version: '1.0.0' });
  await legacy.connect(legacySide);
  e2e.onCleanup(async () => {
    await legacy.close();
    await connection.close();
  });

  // The SDK v2 pins a connection's era from its opening (server/discover), as it does on stdio.
  const tasks = new OperationTaskStore(runtime.engine.operations);
  const [modernSide, modernServerSide] = ModernMemoryTransport.createLinkedPair();
  const served = serveStdio(() => createModernServer(runtime, tasks), {
    transport: modernServerSide,
    legacy: 'reject',
  });
  const modern = new ModernClient(
    { name: 'era-2026', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: MODERN } } },
  );
  await modern.connect(modernSide);
  e2e.onCleanup(async () => {
    await modern.close();
    await served.close();
    tasks.clear();
  });
  return { legacy, modern };
}

/** What a rejected request threw: its JSON-RPC code and message. */
async function rejection(request: Promise<unknown>): Promise<{ code: unknown; message: string }> {
  const error = await request.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(Error);
  return { code: (error as { code?: unknown }).code, message: (error as Error).message };
}

describe.concurrent('the dispatch both eras share', () => {
  it('SPEC §12: both eras list the same tools in the same order, with the same output schema ids', async (context) => {
    const { legacy, modern } = await bothEras(context);
    const [old, current] = [(await legacy.listTools()).tools, (await modern.listTools()).tools];
    expect(current.map((tool) => tool.name)).toEqual(old.map((tool) => tool.name));
    expect(current.map((tool) => tool.outputSchema?.['$id'])).toEqual(
      old.map((tool) => tool.outputSchema?.['$id']),
    );
    expect(old.length).toBeGreaterThan(5);
  });

  it('SPEC §3: an unknown tool is -32602 with the same message in both eras, and a refused call the same tool error', async (context) => {
    const { legacy, modern } = await bothEras(context);
    const unknown = { name: 'no_such_tool', arguments: {} };
    const [old, current] = [
      await rejection(legacy.callTool(unknown)),
      await rejection(modern.callTool(unknown)),
    ];
    expect(old.code).toBe(RpcCode.InvalidParams);
    expect(current.code).toBe(RpcCode.InvalidParams);
    expect(old.message).toContain('unknown tool "no_such_tool"');
    expect(current.message).toContain('unknown tool "no_such_tool"');

    const refused = { name: 'sandboxed_shell', arguments: {} };
    const [oldResult, currentResult] = [
      (await legacy.callTool(refused)) as CallToolResult,
      (await modern.callTool(refused)) as CallToolResult,
    ];
    expect(oldResult.isError).toBe(true);
    expect(currentResult.isError).toBe(true);
    expect(currentResult.content).toEqual(oldResult.content);
    expect(oldResult.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringMatching(/^\[ARGUMENTS_INVALID\] Invalid arguments for sandboxed_shell:/),
    });
  });
});
