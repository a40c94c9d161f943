// A remote MCP server that misbehaves, on purpose (SPEC §10, R14.7): tool names clients would
// refuse or that collide, a tool that needs a task, an output schema built to make a validator
// backtrack for hours, its own JSON-RPC errors. Ahma offers what it can, stays responsive, and
// keeps the connection through the remote's errors. No OAuth here: the remote is open.
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { E2E, textOf, waitFor } from '../../support/harness.js';

const e2e = new E2E();
afterEach(() => e2e.cleanup());

const object = { type: 'object' as const, properties: {} };
/** Exponential backtracking for a validator that compiles the pattern (ajv does). */
const EVIL = `${'a'.repeat(40)}!`;
const TOOLS: Tool[] = [
  { name: 'fine', inputSchema: object },
  { name: 'has.dot', inputSchema: object },
  { name: 'twice', inputSchema: object },
  { name: 'twice', inputSchema: object },
  { name: 'tasks_only', inputSchema: object, execution: { taskSupport: 'required' } },
  {
    name: 'evil_schema',
    inputSchema: object,
    outputSchema: {
      type: 'object',
      properties: { value: { type: 'string', pattern: '^(a+)+$' } },
    },
  },
  { name: 'refuses', inputSchema: object },
];

/** The hostile remote; `initializes` counts the connections Ahma opened. */
async function hostileRemote(): Promise<{ url: string; initializes: () => number }> {
  let initializes = 0;
  const http: HttpServer = createServer((req, res) => {
    const server = new Server(
      { name: 'hostile', version: '1.0.0' },
      { capabilities: { tools: {} } },
    );
    server.oninitialized = () => {
      initializes += 1;
    };
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
    server.setRequestHandler(CallToolRequestSchema, (request) => {
      if (request.params.name === 'refuses') {
        throw new McpError(ErrorCode.InvalidParams, 'the remote does not like these arguments');
      }
      if (request.params.name === 'evil_schema') {
        return { content: [{ type: 'text', text: EVIL }], structuredContent: { value: EVIL } };
      }
      return { content: [{ type: 'text', text: `${request.params.name} ok` }] };
    });
    const transport = new StreamableHTTPServerTransport({});
    res.on('close', () => void server.close());
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  e2e.onCleanup(
    () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  );
  const { port } = http.address() as AddressInfo;
  return { url: `http://127.0.0.1:${String(port)}/mcp`, initializes: () => initializes };
}

describe('a hostile remote MCP server', () => {
  it("R14.7: only tools with names clients accept, listed once and callable without a task, are offered; a hostile output schema costs nothing; the remote's errors keep the connection", async () => {
    const remote = await hostileRemote();
    const scope = await e2e.scope({ noTools: true });
    await writeFile(
      join(scope.dir, '.ahma', 'mcp.json'),
      JSON.stringify({ servers: { bad: { type: 'http', url: remote.url } } }),
    );
    const server = await e2e.inProcess(scope);
    const names = async () => (await server.client.listTools()).tools.map((tool) => tool.name);
    await waitFor(async () => (await names()).includes('bad_fine'), 'the remote tools');
    const offered = (await names()).filter((name) => name.startsWith('bad_'));
    // has.dot: not a name clients accept; twice: listed twice, offered once; tasks_only: needs a task.
    expect(offered.sort()).toEqual(['bad_evil_schema', 'bad_fine', 'bad_refuses', 'bad_twice']);
    const listed = (await server.client.listTools()).tools.find(
      (t) => t.name === 'bad_evil_schema',
    );
    expect(listed?.outputSchema).toBeUndefined(); // never handed on to Ahma's clients
    const started = Date.now();
    const evil = await server.call('bad_evil_schema');
    expect(evil.structuredContent).toEqual({ value: EVIL });
    expect(Date.now() - started).toBeLessThan(5000);
    const refused = await server.call('bad_refuses');
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('does not like these arguments');
    expect(textOf(await server.call('bad_fine'))).toBe('fine ok');
    expect(remote.initializes()).toBe(1); // the remote's error did not cost the connection
  });
});
