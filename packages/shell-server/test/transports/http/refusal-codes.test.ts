// The JSON-RPC error codes of the HTTP server's own refusals (jsonrpc/codes.ts): each is a JSON-RPC
// error without id, RpcCode.Refused (-32000) unless the cause has a code of its own, and a cause
// the SDK's Streamable HTTP transport also answers gets the very answer the SDK gives (status,
// code, message): a client sees one answer for one cause, whoever gave it. The SDK transport and
// the server run in this process; requests are real HTTP.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { describe, expect, it, type TestContext } from 'vitest';
import { RpcCode } from '../../../src/jsonrpc/codes.js';
import { E2E } from '../../support/harness.js';
import { httpServer, INITIALIZE, post, rawRequest } from '../../support/http.js';

const TOOLS_LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
const ACCEPT = { accept: 'application/json, text/event-stream' };

/** A fresh E2E for one concurrent test, cleaned up when it ends. */
function setup(context: TestContext): E2E {
  const e2e = new E2E();
  context.onTestFinished(() => e2e.cleanup());
  return e2e;
}

/** Status and JSON-RPC error of an answer. */
async function answerOf(response: Response) {
  const body = (await response.json()) as { id?: unknown; error?: unknown };
  return { status: response.status, id: body.id, error: body.error };
}

/** The SDK's own transport, initialized, with a request of `headers` sent to it. */
async function sdkAnswer(headers: Record<string, string>) {
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => 'the-only-session',
    enableJsonResponse: true,
  });
  const server = new Server({ name: 'sdk', version: '1.0.0' }, { capabilities: { tools: {} } });
  await server.connect(transport);
  const request = (body: object, extra: Record<string, string>) =>
    transport.handleRequest(
      new Request('http://localhost/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...ACCEPT, ...extra },
        body: JSON.stringify(body),
      }),
    );
  try {
    expect((await request(INITIALIZE, {})).status).toBe(200);
    return await answerOf(await request(TOOLS_LIST, headers));
  } finally {
    await server.close();
  }
}

describe.concurrent('the codes of the HTTP refusals', () => {
  it('R8.4: a request without its session and one naming an unknown session get the SDK transport’s own answers', async (context) => {
    const e2e = setup(context);
    const http = await httpServer(e2e, await e2e.scope());
    const ours = (headers: Record<string, string>) =>
      post(http.url, TOOLS_LIST, { ...ACCEPT, ...headers }).then(answerOf);

    const withoutSession = await ours({});
    expect(withoutSession).toEqual(await sdkAnswer({}));
    expect(withoutSession).toEqual({
      status: 400,
      id: null,
      error: { code: RpcCode.Refused, message: 'Bad Request: Mcp-Session-Id header is required' },
    });

    const unknown = { 'mcp-session-id': '00000000-0000-4000-8000-000000000000' };
    const unknownSession = await ours(unknown);
    expect(unknownSession).toEqual(await sdkAnswer(unknown));
    expect(unknownSession).toEqual({
      status: 404,
      id: null,
      error: { code: RpcCode.SessionNotFound, message: 'Session not found' },
    });
  });

  it('SPEC §6 security: the guard, the routes and the body limit refuse with -32000 (RpcCode.Refused) and no id', async (context) => {
    const e2e = setup(context);
    const http = await httpServer(e2e, await e2e.scope(), [], { maxBodyBytes: 1024 });
    const refused = (status: number) => ({
      status,
      id: null,
      error: { code: RpcCode.Refused, message: expect.any(String) as unknown },
    });
    expect(RpcCode.Refused).toBe(-32000);

    const foreignHost = await rawRequest(http.url, {
      method: 'POST',
      headers: { host: 'evil.example.com', 'content-type': 'application/json' },
      body: JSON.stringify(INITIALIZE),
    });
    const hostAnswer = JSON.parse(foreignHost.body) as object;
    expect({ status: foreignHost.status, ...hostAnswer }).toMatchObject(refused(403));
    expect(await answerOf(await fetch(new URL('/elsewhere', http.url)))).toEqual(refused(404));
    expect(await answerOf(await fetch(http.url, { method: 'PUT', body: '{}' }))).toEqual(
      refused(405),
    );
    expect(await answerOf(await post(http.url, 'x'.repeat(2048)))).toEqual(refused(413));
  });
});
