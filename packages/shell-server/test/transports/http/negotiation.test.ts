// R8A: a POST is answered with one JSON body or an SSE stream according to its Accept header, and
// Content-Type says which; no Accept (or */*) is JSON, never 406. The SDK's real Streamable HTTP
// client (which accepts both) gets SSE and with it the progress of a call kept open. The HTTP
// server runs in the test process on a free port; raw requests show the header rules.
import { afterEach, describe, expect, it } from 'vitest';
import { E2E, structured, type CommandResult } from '../../support/harness.js';
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

const TOOLS_LIST = { jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} };

describe('R8A: JSON or SSE by Accept', () => {
  it('R8A: no Accept, */* and application/json get one JSON body with Content-Type application/json', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const session = await rawSession(http.url);
    for (const accept of [
      undefined,
      '*/*',
      'application/json',
      'application/json, text/event-stream;q=0.5',
    ]) {
      const headers: Record<string, string> = { 'mcp-session-id': session };
      if (accept !== undefined) headers['accept'] = accept;
      const response = await post(http.url, TOOLS_LIST, headers);
      expect(response.status, String(accept)).toBe(200);
      expect(response.headers.get('content-type'), String(accept)).toBe('application/json');
      const body = (await response.json()) as { id: number; result: { tools: unknown[] } };
      expect(body.id).toBe(7);
      expect(body.result.tools.length).toBeGreaterThan(0);
    }
  });

  it('R8A: an initialize without Accept is answered in JSON with its Mcp-Session-Id (not 406)', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const response = await post(http.url, INITIALIZE);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await response.json()).toMatchObject({
      id: 0,
      result: { serverInfo: { name: 'ahma' } },
    });
  });

  it('R8A: Accept naming text/event-stream (alone or with JSON) gets an SSE stream whose events have ids', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const session = await rawSession(http.url);
    for (const accept of ['text/event-stream', 'application/json, text/event-stream']) {
      const response = await post(http.url, TOOLS_LIST, { 'mcp-session-id': session, accept });
      expect(response.status, accept).toBe(200);
      expect(response.headers.get('content-type'), accept).toBe('text/event-stream');
      const events = sseEvents(await response.text()).filter((event) => event.data !== undefined);
      expect(events).toEqual([
        {
          id: expect.stringMatching(/:\d+$/),
          event: 'message',
          data: expect.objectContaining({ id: 7 }),
        },
      ]);
    }
  });

  it('R8A: a batch wanting JSON gets one array of its answers', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const session = await rawSession(http.url);
    const response = await post(http.url, [TOOLS_LIST, { jsonrpc: '2.0', id: 8, method: 'ping' }], {
      'mcp-session-id': session,
      accept: 'application/json',
    });
    expect(response.headers.get('content-type')).toBe('application/json');
    const body = (await response.json()) as { id: number }[];
    expect(body.map((answer) => answer.id).sort()).toEqual([7, 8]);
  });

  it('R8A: a notification is answered 202 without a body, whatever Accept says', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const session = await rawSession(http.url);
    for (const accept of ['application/json', 'text/event-stream']) {
      const response = await post(
        http.url,
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99 } },
        { 'mcp-session-id': session, accept },
      );
      expect(response.status).toBe(202);
      expect(await response.text()).toBe('');
    }
  });

  it('R8A.5: the SDK client gets the progress heartbeats of a call kept open, over SSE', async () => {
    const scope = await e2e.scope();
    scope.env['AHMA_TEST_HEARTBEAT_MS'] = '100';
    const http = await httpServer(e2e, scope, ['--sync']);
    const client = await httpClient(e2e, http.url, http);
    const result = await client.call(
      'sandboxed_shell',
      { command: 'sleep 0.6; echo done' },
      { progress: true },
    );
    expect(structured<CommandResult>(result)).toMatchObject({
      status: 'completed',
      output: 'done\n',
    });
    expect(client.progress.length).toBeGreaterThan(0);
  });
});
