// R8.4 with --session-isolation (R8D): an isolated session's commands run in its own process, and
// the session table must still know they run, or a session whose client takes JSON answers (no
// GET stream) is swept as idle, or ended to make room, and its command killed with it; and the
// session processes together stay within the memory budget. The real server in the test process,
// its sessions real `ahma-shell --mode stdio` processes (the built binary), short limits.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionLimits } from '../../../src/transports/http/sessions.js';
import {
  E2E,
  processesMatching,
  sleep,
  uniqueMarker,
  waitFor,
  type Scope,
} from '../../support/harness.js';
import {
  callTool,
  isolatedHttpServer,
  INITIALIZE,
  post,
  rawSession,
  type InProcessHttp,
} from '../../support/http.js';

const e2e = new E2E();
afterEach(() => e2e.cleanup());

/** `ahma-shell --mode http --session-isolation …args` in this process, with `limits`. */
function isolatedServer(
  scope: Scope,
  args: readonly string[],
  limits: SessionLimits,
): Promise<InProcessHttp> {
  return isolatedHttpServer(e2e, scope, args, { sessionLimits: limits });
}

const SHORT_IDLE: SessionLimits = { idleTimeoutMs: 300, maxSessions: 4 };

describe('an isolated session while its commands run', () => {
  it('R8D R8.4: an async command keeps its isolated session past the idle timeout though the client takes JSON answers and has no GET stream; the command completes, then the session is swept', async () => {
    const scope = await e2e.scope();
    const http = await isolatedServer(scope, ['--inline-wait', '0'], SHORT_IDLE);
    const session = await rawSession(http.url);
    const marker = uniqueMarker();
    const done = join(scope.dir, `${marker}.done`);
    const started = await callTool(http.url, session, 'sandboxed_shell', {
      command: `(exec -a ${marker} sleep 3) && touch ${done}`,
    });
    expect(started.structuredContent).toMatchObject({ status: 'started' });
    await waitFor(async () => (await processesMatching(marker)).length > 0, 'the command to run');

    // Many idle timeouts later: the session and its command are still there.
    await sleep(1500);
    expect(http.server.sessions.size).toBe(1);
    expect(await processesMatching(marker)).toHaveLength(1);
    expect(
      (
        await post(
          http.url,
          { jsonrpc: '2.0', id: 7, method: 'ping' },
          { 'mcp-session-id': session, accept: 'application/json' },
        )
      ).status,
    ).toBe(200);

    // The command ends by itself (its completion push went to the event store: no GET stream),
    // and only then is the session idle.
    await waitFor(() => existsSync(done), 'the command to complete', 10_000);
    await waitFor(() => http.server.sessions.size === 0, 'the idle session to be swept', 5000);
    expect(
      (
        await post(
          http.url,
          { jsonrpc: '2.0', id: 8, method: 'ping' },
          { 'mcp-session-id': session },
        )
      ).status,
    ).toBe(404);
  });

  it('R8D R8.4: a synchronous call whose client dropped its POST keeps the isolated session while the command runs', async () => {
    const scope = await e2e.scope();
    const http = await isolatedServer(scope, [], SHORT_IDLE);
    const session = await rawSession(http.url);
    const marker = uniqueMarker();
    const done = join(scope.dir, `${marker}.done`);
    const controller = new AbortController();
    const call = fetch(http.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': session,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'sandboxed_shell',
          arguments: {
            command: `(exec -a ${marker} sleep 2) && touch ${done}`,
            execution_mode: 'Synchronous',
          },
        },
      }),
      signal: controller.signal,
    }).catch(() => undefined);
    await waitFor(async () => (await processesMatching(marker)).length > 0, 'the command to run');
    controller.abort();
    await call;

    await sleep(1000);
    expect(http.server.sessions.size).toBe(1);
    expect(await processesMatching(marker)).toHaveLength(1);
    await waitFor(() => existsSync(done), 'the command to complete', 10_000);
    await waitFor(() => http.server.sessions.size === 0, 'the idle session to be swept', 5000);
  });
});

describe('the memory budget of the session processes', () => {
  it('R8D R8.4: a session that would take the session processes over --session-memory-mb is refused with 503 naming the budget, and admitted once an idle session could be ended', async () => {
    const scope = await e2e.scope();
    // One process (~80 MB) fits; a second would not.
    const http = await isolatedServer(scope, [], {
      idleTimeoutMs: 60_000,
      maxSessions: 16,
      sessionMemoryMb: 120,
      evictableIdleMs: 1000,
    });
    const first = await rawSession(http.url);
    // Its process starts once the session's scope is locked: answered, the request shows it runs.
    const listed = await post(
      http.url,
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { 'mcp-session-id': first, accept: 'application/json' },
    );
    expect(listed.status).toBe(200);
    const refused = await post(http.url, INITIALIZE, { accept: 'application/json' });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('60');
    const body = (await refused.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/memory/);
    expect(body.error.message).toContain('--session-memory-mb');
    expect(body.error.message).toMatch(/use \d+ MiB of the 120 MiB budget/);
    expect(http.server.sessions.size).toBe(1);

    // The first session, idle for long enough, makes room; its id is then unknown.
    await sleep(1100);
    await rawSession(http.url);
    expect(http.server.sessions.size).toBe(1);
    expect(
      (await post(http.url, { jsonrpc: '2.0', id: 3, method: 'ping' }, { 'mcp-session-id': first }))
        .status,
    ).toBe(404);
  });
});
