// R8.4: abandoned sessions do not pile up. An idle session (no open exchange, no running command)
// is ended after the idle timeout and its id answers 404; a connected SDK client (its GET stream
// open) or a running command keeps a session; at the cap a new session ends the longest-idle one,
// and is refused with 503 when every session is busy. Short limits, the real server in the test
// process.
import { afterEach, describe, expect, it } from 'vitest';
import { E2E, processesMatching, sleep, uniqueMarker, waitFor } from '../../support/harness.js';
import {
  callTool,
  httpClient,
  httpServer,
  INITIALIZE,
  post,
  rawSession,
} from '../../support/http.js';

const e2e = new E2E();
afterEach(() => e2e.cleanup());

const TOOLS_LIST = { jsonrpc: '2.0', id: 5, method: 'tools/list', params: {} };

describe('idle sessions', () => {
  it('R8.4: a session idle past the timeout is ended, and its id then gets 404', async () => {
    const http = await httpServer(e2e, await e2e.scope(), [], {
      sessionLimits: { idleTimeoutMs: 300, maxSessions: 10 },
    });
    const session = await rawSession(http.url);
    expect((await post(http.url, TOOLS_LIST, { 'mcp-session-id': session })).status).toBe(200);
    await waitFor(() => http.server.sessions.size === 0, 'the idle session to end', 5000);
    expect((await post(http.url, TOOLS_LIST, { 'mcp-session-id': session })).status).toBe(404);
  });

  it('R8.4: a connected SDK client (its GET stream open) and a running command keep their sessions', async () => {
    const http = await httpServer(e2e, await e2e.scope(), ['--inline-wait', '0'], {
      sessionLimits: { idleTimeoutMs: 300, maxSessions: 10 },
    });
    const client = await httpClient(e2e, http.url, http);
    const raw = await rawSession(http.url);
    const marker = uniqueMarker();
    await callTool(http.url, raw, 'sandboxed_shell', { command: `exec -a ${marker} sleep 300` });
    await waitFor(async () => (await processesMatching(marker)).length > 0, 'the command to run');
    await sleep(1200);
    expect(http.server.sessions.size).toBe(2);
    expect((await client.client.listTools()).tools.length).toBeGreaterThan(0);
    expect(await processesMatching(marker)).toHaveLength(1);
  });
});

describe('the cap on sessions', () => {
  it('R8.4: at the cap a new session ends the longest-idle one; when none is idle it gets 503', async () => {
    const http = await httpServer(e2e, await e2e.scope(), [], {
      sessionLimits: { idleTimeoutMs: 60_000, maxSessions: 2 },
    });
    const oldest = await rawSession(http.url);
    await sleep(20);
    const newer = await rawSession(http.url);
    const third = await rawSession(http.url);
    expect(http.server.sessions.size).toBe(2);
    expect((await post(http.url, TOOLS_LIST, { 'mcp-session-id': oldest })).status).toBe(404);
    expect((await post(http.url, TOOLS_LIST, { 'mcp-session-id': newer })).status).toBe(200);
    expect((await post(http.url, TOOLS_LIST, { 'mcp-session-id': third })).status).toBe(200);

    // Two connected clients: nothing is idle, so a third is refused.
    const busy = await httpServer(e2e, await e2e.scope(), [], {
      sessionLimits: { idleTimeoutMs: 60_000, maxSessions: 2 },
    });
    await httpClient(e2e, busy.url, busy);
    await httpClient(e2e, busy.url, busy);
    expect(busy.server.sessions.size).toBe(2);
    // The SDK clients open their GET streams just after initializing.
    await sleep(200);
    const refused = await post(busy.url, INITIALIZE);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(await refused.json()).toMatchObject({
      error: { message: expect.stringContaining('Too many') },
    });
  });
});
