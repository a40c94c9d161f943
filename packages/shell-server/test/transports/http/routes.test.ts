// The routes of the HTTP server (R8.1, R8.3, R8.4, R8C): sessions are opened by initialize only;
// a request without Mcp-Session-Id gets 400, an unknown or ended one 404; /sse serves the legacy
// HTTP+SSE transport to the SDK's SSEClientTransport, and a POST to /sse that is not for a legacy
// session is handled exactly like one to /mcp (never 405). The server runs in the test process.
import { afterEach, describe, expect, it } from 'vitest';
import {
  E2E,
  FIXTURE_TOOLS,
  pushedId,
  structured,
  textOf,
  waitFor,
  type CommandResult,
  type StartedResult,
} from '../../support/harness.js';
import {
  httpClient,
  httpServer,
  INITIALIZE,
  post,
  rawSession,
  sseEvents,
} from '../../support/http.js';

const e2e = new E2E();
afterEach(() => e2e.cleanup());

const TOOLS_LIST = { jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} };

describe('sessions', () => {
  it('R8.1: the SDK Streamable HTTP client lists the tools and calls one', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const client = await httpClient(e2e, http.url, http);
    const names = (await client.client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining([...FIXTURE_TOOLS]));
    const result = await client.call('e2e_sync', { value: 'over-http' });
    expect(structured<CommandResult>(result).output).toContain('over-http');
  });

  it('R8.3: concurrent requests of one session are each answered on their own POST', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const client = await httpClient(e2e, http.url, http);
    const results = await Promise.all(
      ['a', 'b', 'c', 'd'].map((value) =>
        client.call('sandboxed_shell', {
          command: `sleep 0.2; echo ${value}`,
          execution_mode: 'Synchronous',
        }),
      ),
    );
    expect(results.map((result) => structured<CommandResult>(result).output)).toEqual([
      'a\n',
      'b\n',
      'c\n',
      'd\n',
    ]);
  });

  it('R8.4: a request other than initialize without Mcp-Session-Id gets 400 (POST, GET, DELETE)', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const posted = await post(http.url, TOOLS_LIST, { accept: 'application/json' });
    expect(posted.status).toBe(400);
    expect(posted.headers.get('content-type')).toBe('application/json');
    expect(await posted.json()).toMatchObject({
      error: { message: expect.stringContaining('Mcp-Session-Id header is required') },
    });
    const got = await fetch(http.url, { headers: { accept: 'text/event-stream' } });
    expect(got.status).toBe(400);
    const deleted = await fetch(http.url, { method: 'DELETE' });
    expect(deleted.status).toBe(400);
    expect(http.server.sessions.size).toBe(0);
  });

  it('R8.4: an unknown session id gets 404, for every method', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const headers = { 'mcp-session-id': '00000000-0000-4000-8000-000000000000' };
    expect((await post(http.url, TOOLS_LIST, headers)).status).toBe(404);
    expect(
      (await fetch(http.url, { headers: { ...headers, accept: 'text/event-stream' } })).status,
    ).toBe(404);
    expect((await fetch(http.url, { method: 'DELETE', headers })).status).toBe(404);
    // Even an initialize: an id names a session, it does not open one.
    expect((await post(http.url, INITIALIZE, headers)).status).toBe(404);
  });

  it('R8.4: each initialize opens its own session with its own id', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const [a, b] = [await rawSession(http.url), await rawSession(http.url)];
    expect(a).not.toBe(b);
    expect(http.server.sessions.size).toBe(2);
    // A second initialize in a session is refused by it.
    const again = await post(http.url, INITIALIZE, { 'mcp-session-id': a });
    expect(again.status).toBe(400);
  });

  it('R8.4: a refused initialize (wrong Content-Type) leaves no session behind', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const response = await post(http.url, INITIALIZE, { 'content-type': 'text/plain' });
    expect(response.status).toBe(415);
    expect(response.headers.get('mcp-session-id')).toBeNull();
    expect(http.server.sessions.size).toBe(0);
  });

  it('R8.3: a body that is not JSON gets 400 with a JSON-RPC parse error', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const response = await post(http.url, '{"jsonrpc": ');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: -32700 }, id: null });
  });

  it('R8.1: other paths get 404 and other methods 405', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const root = new URL('/', http.url).href;
    expect((await fetch(root)).status).toBe(404);
    const put = await fetch(http.url, { method: 'PUT', body: '{}' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, POST, DELETE');
  });
});

describe('R8C: /sse', () => {
  it('R8C.3: the SDK legacy SSE client connects to /sse, lists the tools, calls one and gets completion pushes', async () => {
    const http = await httpServer(e2e, await e2e.scope(), ['--inline-wait', '0']);
    const legacyUrl = new URL('/sse', http.url).href;
    const client = await httpClient(e2e, legacyUrl, http, { legacy: true });
    expect((await client.client.listTools()).tools.map((tool) => tool.name)).toContain('e2e_sync');
    const started = structured<StartedResult>(
      await client.call('sandboxed_shell', { command: 'echo legacy' }),
    );
    expect(started.status).toBe('started');
    const push = await waitFor(
      () => client.messages.find((message) => pushedId(message) === started.operation_id),
      'the completion push',
    );
    expect(push.data).toMatchObject({ output: 'legacy\n' });
    expect(http.server.sessions.size).toBe(1);
    await client.close();
    await waitFor(
      () => http.server.sessions.size === 0,
      'the legacy session to end with its stream',
    );
  });

  it('R8C.3: GET /sse opens with an endpoint event naming where to POST; every event has an id', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const controller = new AbortController();
    const response = await fetch(new URL('/sse', http.url), {
      headers: { accept: 'text/event-stream' },
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = response.body?.pipeThrough(new TextDecoderStream()).getReader();
    const first = (await reader?.read())?.value ?? '';
    expect(first).toMatch(/^id: 1\nevent: endpoint\ndata: \/sse\?sessionId=[0-9a-f-]{36}\n\n/);
    const endpoint = /data: (\S+)/.exec(first)?.[1] ?? '';
    const posted = await post(new URL(endpoint, http.url).href, INITIALIZE);
    expect(posted.status).toBe(202);
    const answer = (await reader?.read())?.value ?? '';
    expect(sseEvents(answer)).toEqual([
      expect.objectContaining({
        id: '2',
        event: 'message',
        data: expect.objectContaining({ id: 0 }),
      }),
    ]);
    controller.abort();
  });

  it('R8C.4: POST /sse without a legacy sessionId is handled like /mcp: initialize opens a session, never 405', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const sse = new URL('/sse', http.url).href;
    const response = await post(sse, INITIALIZE);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const session = response.headers.get('mcp-session-id');
    expect(session).not.toBeNull();
    // The session is the same on either path.
    const listed = await post(http.url, TOOLS_LIST, { 'mcp-session-id': session ?? '' });
    expect(listed.status).toBe(200);
    const onSse = await post(sse, TOOLS_LIST, { 'mcp-session-id': session ?? '' });
    expect(onSse.status).toBe(200);
    // Without a session: the same 400 as /mcp, and a stale legacy id changes nothing.
    expect((await post(sse, TOOLS_LIST)).status).toBe(400);
    expect((await post(`${sse}?sessionId=gone`, TOOLS_LIST)).status).toBe(400);
  });

  it('R8C.1: the SDK Streamable HTTP client given the /sse URL works as on /mcp', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const client = await httpClient(e2e, new URL('/sse', http.url).href, http);
    const result = await client.call('e2e_sync', { value: 'via-sse-path' });
    expect(textOf(result)).toContain('via-sse-path');
  });
});
