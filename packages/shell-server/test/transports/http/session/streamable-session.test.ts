// A Streamable HTTP session (R8.2, R8.4): its GET stream carries the completion pushes of calls
// answered `started` (the POST stream of the call has closed by then) and tools/list_changed, with
// the session's logging/setLevel honoured; every event has an id and a reconnect with
// Last-Event-ID is sent what it missed on that stream, and only that; a push made while no GET
// stream was open reaches the next one; DELETE ends the session and kills the commands it started.
// The HTTP server runs in the test process; the SDK's real client and raw requests drive it;
// processes are found in /proc.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  E2E,
  exists,
  processesMatching,
  pushedId,
  sleep,
  structured,
  uniqueMarker,
  waitFor,
  type RunningServer,
  type StartedResult,
} from '../../../support/harness.js';
import {
  callTool,
  httpClient,
  httpServer,
  isPushOf,
  openStream,
  post,
  rawSession,
} from '../../../support/http.js';

const e2e = new E2E();
afterEach(() => e2e.cleanup());

/** Starts an async `echo` in a raw session and returns its operation id. */
async function startEcho(url: string, session: string, text: string, id: number): Promise<string> {
  const result = await callTool(url, session, 'sandboxed_shell', { command: `echo ${text}` }, id);
  const operationId = result.structuredContent?.['operation_id'];
  if (typeof operationId !== 'string') throw new Error(`not started: ${JSON.stringify(result)}`);
  return operationId;
}

describe('the GET stream', () => {
  it('R8.2: the SDK client receives the completion push of a call answered `started` on its GET stream', async () => {
    const http = await httpServer(e2e, await e2e.scope(), ['--inline-wait', '0']);
    const client = await httpClient(e2e, http.url, http);
    const started = structured<StartedResult>(
      await client.call('sandboxed_shell', { command: 'sleep 0.3; echo pushed' }),
    );
    expect(started.status).toBe('started');
    const push = await waitFor(
      () => client.messages.find((message) => pushedId(message) === started.operation_id),
      'the completion push',
    );
    expect(push.data).toMatchObject({ status: 'completed', output: 'pushed\n' });
  });

  it('R8.2: hot reload reaches every connected SDK client as tools/list_changed on its GET stream', async () => {
    const scope = await e2e.scope({ noTools: true });
    const http = await httpServer(e2e, scope);
    const [a, b] = [await httpClient(e2e, http.url, http), await httpClient(e2e, http.url, http)];
    // Their GET streams open right after initialize; the change must come after that.
    await sleep(200);
    await writeFile(
      join(scope.dir, '.ahma', 'tools', 'hello.json'),
      JSON.stringify({ name: 'hello', description: 'Say hello.', command: 'echo hello' }),
    );
    const changed = (client: RunningServer) =>
      client.received.some(
        (entry) =>
          'method' in entry.message && entry.message.method === 'notifications/tools/list_changed',
      );
    await waitFor(() => changed(a) && changed(b), 'tools/list_changed on both clients');
    expect((await a.client.listTools()).tools.map((tool) => tool.name)).toContain('hello');
  });

  it("R2.2: an HTTP session's logging/setLevel is honoured: warning silences the completion push, info brings it back", async () => {
    const http = await httpServer(e2e, await e2e.scope(), ['--inline-wait', '0']);
    const client = await httpClient(e2e, http.url, http);
    await client.client.setLoggingLevel('warning');
    const quiet = structured<StartedResult>(
      await client.call('sandboxed_shell', { command: 'echo quiet' }),
    );
    await client.call('await', { ids: [quiet.operation_id] });
    await client.client.setLoggingLevel('info');
    const loud = structured<StartedResult>(
      await client.call('sandboxed_shell', { command: 'echo loud' }),
    );
    await waitFor(
      () => client.messages.find((message) => pushedId(message) === loud.operation_id),
      'the push after setLevel info',
    );
    expect(client.messages.map(pushedId)).toEqual([loud.operation_id]);
  });

  it('R8.2: a reconnect with Last-Event-ID is sent the events it missed, and none it had', async () => {
    const http = await httpServer(e2e, await e2e.scope(), ['--inline-wait', '0']);
    const session = await rawSession(http.url);
    const first = await openStream(http.url, { 'mcp-session-id': session });
    expect(first.status).toBe(200);
    const one = await startEcho(http.url, session, 'one', 1);
    const seen = await first.next(isPushOf(one), 'the first push');
    expect(seen.id).toMatch(/^_GET_stream:\d+$/);
    first.close();
    // While the client is away: another completion.
    const two = await startEcho(http.url, session, 'two', 2);
    await waitFor(
      () => http.runtime.engine.operations.status([two])[0]?.status === 'completed',
      'the second command to end',
    );
    const resumed = await openStream(http.url, {
      'mcp-session-id': session,
      'last-event-id': seen.id ?? '',
    });
    expect(resumed.status).toBe(200);
    const missed = await resumed.next(isPushOf(two), 'the missed push');
    expect(missed.id).not.toBe(seen.id);
    expect(resumed.events.filter(isPushOf(one))).toEqual([]);
    resumed.close();
  });

  it('R8.2: a push made while no GET stream was open reaches the next GET, even without Last-Event-ID', async () => {
    const http = await httpServer(e2e, await e2e.scope(), ['--inline-wait', '0']);
    const session = await rawSession(http.url);
    const operationId = await startEcho(http.url, session, 'early', 1);
    await waitFor(
      () => http.runtime.engine.operations.status([operationId])[0]?.status === 'completed',
      'the command to end',
    );
    const stream = await openStream(http.url, { 'mcp-session-id': session });
    const push = await stream.next(isPushOf(operationId), 'the push stored for it');
    expect(push.data).toMatchObject({ params: { data: { output: 'early\n' } } });
    stream.close();
    // Delivered once: the following stream does not get it again. (It is refused with 409 until
    // the server has seen the first one go.)
    const again = await waitFor(async () => {
      const next = await openStream(http.url, { 'mcp-session-id': session });
      return next.status === 409 ? undefined : next;
    }, 'the first stream to be gone');
    expect(again.status).toBe(200);
    const later = await startEcho(http.url, session, 'later', 2);
    await again.next(isPushOf(later), 'the next push');
    expect(again.events.filter(isPushOf(operationId))).toEqual([]);
    again.close();
  });

  it('R8.2: a Last-Event-ID this session did not issue (malformed, or ahead of it) is refused (400)', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const session = await rawSession(http.url);
    const stream = await openStream(http.url, {
      'mcp-session-id': session,
      'last-event-id': 'not-an-id',
    });
    expect(stream.status).toBe(400);
    const ahead = await openStream(http.url, {
      'mcp-session-id': session,
      'last-event-id': '_GET_stream:999999',
    });
    expect(ahead.status).toBe(400);
  });
});

describe('DELETE', () => {
  it('R8.4: DELETE ends the session, kills the commands it started, and the id is unknown afterwards (404)', async () => {
    const http = await httpServer(e2e, await e2e.scope(), ['--inline-wait', '0']);
    const session = await rawSession(http.url);
    const marker = uniqueMarker();
    const result = await callTool(http.url, session, 'sandboxed_shell', {
      command: `exec -a ${marker} sleep 300`,
    });
    const operationId = String(result.structuredContent?.['operation_id']);
    const [command] = await waitFor(async () => {
      const found = await processesMatching(marker);
      return found.length > 0 && found;
    }, 'the command to run');
    const response = await fetch(http.url, {
      method: 'DELETE',
      headers: { 'mcp-session-id': session },
    });
    expect(response.status).toBe(200);
    // Answered once the command is dead.
    expect(command !== undefined && exists(command.pid)).toBe(false);
    expect(await processesMatching(marker)).toEqual([]);
    expect(http.runtime.engine.operations.status([operationId])[0]?.status).toBe('cancelled');
    const after = await post(
      http.url,
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { 'mcp-session-id': session },
    );
    expect(after.status).toBe(404);
    expect(http.server.sessions.size).toBe(0);
  });

  it('R8.4: a call waiting for its JSON answer when the session is deleted gets 404, and its command dies', async () => {
    const http = await httpServer(e2e, await e2e.scope(), ['--sync']);
    const session = await rawSession(http.url);
    const marker = uniqueMarker();
    const pending = post(
      http.url,
      {
        jsonrpc: '2.0',
        id: 4,
        method: 'tools/call',
        params: { name: 'sandboxed_shell', arguments: { command: `exec -a ${marker} sleep 300` } },
      },
      { 'mcp-session-id': session, accept: 'application/json' },
    );
    await waitFor(async () => (await processesMatching(marker)).length > 0, 'the command to run');
    const deleted = await fetch(http.url, {
      method: 'DELETE',
      headers: { 'mcp-session-id': session },
    });
    expect(deleted.status).toBe(200);
    const answer = await pending;
    expect(answer.status).toBe(404);
    expect(answer.headers.get('content-type')).toBe('application/json');
    expect(await answer.json()).toMatchObject({
      error: { message: 'the session ended before the request was answered' },
    });
    expect(await processesMatching(marker)).toEqual([]);
  });

  it("R8.4: the SDK client's terminateSession ends the session; another session's command runs on", async () => {
    const http = await httpServer(e2e, await e2e.scope(), ['--inline-wait', '0']);
    const mine = await httpClient(e2e, http.url, http);
    const other = await httpClient(e2e, http.url, http);
    const marker = uniqueMarker();
    // Both run at once (two writers of one workspace would take turns: SPEC §14 lanes).
    const beside = { concurrency: 'service' };
    await mine.call('sandboxed_shell', { command: `exec -a ${marker}-mine sleep 300`, ...beside });
    await other.call('sandboxed_shell', {
      command: `exec -a ${marker}-other sleep 300`,
      ...beside,
    });
    await waitFor(
      async () =>
        (await processesMatching(`${marker}-mine`)).length > 0 &&
        (await processesMatching(`${marker}-other`)).length > 0,
      'both commands to run',
    );
    expect(http.server.sessions.size).toBe(2);
    const transport = mine.transport as unknown as { terminateSession(): Promise<void> };
    await transport.terminateSession();
    expect(await processesMatching(`${marker}-mine`)).toEqual([]);
    expect(await processesMatching(`${marker}-other`)).toHaveLength(1);
    expect(http.server.sessions.size).toBe(1);
  });
});
