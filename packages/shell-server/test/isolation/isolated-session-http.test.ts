// Session isolation over the SDK's real Streamable HTTP transports (no socket: the client's fetch
// hands each request to the server transport's handleRequest). Without an event store, a
// roots/list sent when the client is initialized is dropped, since the client opens its GET stream
// only after that notification was answered (SDK 1.32 client/streamableHttp.js); the question
// asked again on the stream of the client's next request must settle the scope.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { ListRootsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createIsolatedSession,
  type IsolatedSession,
} from '../../src/isolation/isolated-session.js';
import { BIN, E2E, structured, type CommandResult } from '../support/harness.js';

const e2e = new E2E();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
  await e2e.cleanup();
});

describe('R8D isolated sessions over Streamable HTTP', () => {
  it('R8D.7: the roots question lost before the GET stream exists is asked again on the next POST, and the session runs on the first root', async () => {
    const server = await e2e.scope();
    const project = await e2e.scope();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
    });
    const rootsAsked: number[] = [];
    let rootsSent = 0;
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      if ('method' in message && message.method === 'roots/list') rootsSent += 1;
      return send(message, options);
    };
    const session: IsolatedSession = createIsolatedSession({
      upstream: transport,
      answerInitialize: await e2e.initializeAnswerer(server),
      defaultScope: server.dir,
      roots: { allowed: ['/var/tmp'], forbidden: [], privatePaths: [] },
      childCommand: { file: process.execPath, args: [BIN, '--mode', 'stdio'] },
      env: server.env,
      logger: pino({ level: 'silent' }),
      rootsTimeoutMs: 15_000,
    });
    const client = new Client(
      { name: 'ahma-isolation-http-test', version: '1.0.0' },
      { capabilities: { roots: {} } },
    );
    client.setRequestHandler(ListRootsRequestSchema, () => {
      rootsAsked.push(Date.now());
      return { roots: [{ uri: pathToFileURL(project.dir).href }] };
    });
    const clientTransport = new StreamableHTTPClientTransport(new URL('http://127.0.0.1/mcp'), {
      fetch: (url, init) => transport.handleRequest(new Request(url, init)),
    });
    cleanups.push(async () => {
      await client.close();
      await session.close();
    });
    await client.connect(clientTransport);

    const started = Date.now();
    const result = (await client.callTool({
      name: 'sandboxed_shell',
      arguments: {
        command: `pwd; touch ${join(project.dir, 'http.txt')}`,
        execution_mode: 'Synchronous',
      },
    })) as CallToolResult;
    expect(structured<CommandResult>(result).output.trim()).toBe(project.dir);
    expect(session.scope).toBe(project.dir);
    // Settled by the question asked again, long before the bounded wait would have ended.
    // The first question was lost (no GET stream yet); the one asked again was answered.
    expect(rootsAsked).toHaveLength(1);
    expect(rootsSent).toBeGreaterThan(rootsAsked.length);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
