// What an ended HTTP session keeps (R8.4, issue 32): nothing of its own. Its connection's pending
// pushes, tasks and subscriptions to the engine and the runtime are released and its event store
// emptied when it ends; its operations stay in the shared history for `status` and `await`, but
// with only a summary of their results (status, exit code, the end of their output, and the log
// holding the whole output when there is one). Counts, not timings: the HTTP server runs in the
// test process, and a raw client drives it.
import { readFile } from 'node:fs/promises';
import { describe, it, type TestContext } from 'vitest';
import type { StreamableSession } from '../../../../src/transports/http/session/streamable-session.js';
import {
  E2E,
  processesMatching,
  uniqueMarker,
  waitFor,
  type CommandResult,
  type Operations,
} from '../../../support/harness.js';
import {
  callTool,
  httpServer,
  post,
  rawSession,
  type InProcessHttp,
} from '../../../support/http.js';

/** A fresh E2E for one concurrent test, cleaned up when it ends. */
function setup(context: TestContext): E2E {
  const e2e = new E2E();
  context.onTestFinished(() => e2e.cleanup());
  return e2e;
}

/** The live session object behind a session id (what the server's session table holds). */
function sessionOf(http: InProcessHttp, id: string): StreamableSession {
  const entry = http.server.sessions.get(id);
  if (entry === undefined) throw new Error(`no session ${id}`);
  return entry.session as StreamableSession;
}

async function startedId(
  http: InProcessHttp,
  session: string,
  command: string,
  id: number,
): Promise<string> {
  // Beside each other: the test's commands are no writers taking turns (SPEC §14 lanes).
  const result = await callTool(
    http.url,
    session,
    'sandboxed_shell',
    { command, concurrency: 'service' },
    id,
  );
  const operationId = result.structuredContent?.['operation_id'];
  if (typeof operationId !== 'string') throw new Error(`not started: ${JSON.stringify(result)}`);
  return operationId;
}

/** The finished operations a raw `status`/`await` answer lists. */
function operationsOf(result: { structuredContent?: Record<string, unknown> }): CommandResult[] {
  return (result.structuredContent as unknown as Operations).operations.filter(
    (operation): operation is CommandResult => operation.status !== 'running',
  );
}

function deleteSession(http: InProcessHttp, session: string): Promise<Response> {
  return fetch(http.url, { method: 'DELETE', headers: { 'mcp-session-id': session } });
}

/** `bytes` of output that end with a recognisable line: `head -c` of a's, then the line. */
function printing(bytes: number, end: string): string {
  return `head -c ${String(bytes)} /dev/zero | tr '\\0' a; echo; echo ${end}`;
}

describe.concurrent('what an ended HTTP session keeps', () => {
  it('R8.4: an ended session frees what it held: pending pushes, tasks, subscriptions and its event store all drop to zero', async (context) => {
    const e2e = setup(context);
    const http = await httpServer(e2e, await e2e.scope(), ['--inline-wait', '0']);
    const engine = http.runtime.engine;
    const before = engine.operations.listenerCounts;
    // No GET stream: every completion push is kept in the event store for the next GET.
    const session = await rawSession(http.url);
    const live = sessionOf(http, session);
    const done = await startedId(http, session, 'echo pushed', 1);
    const marker = uniqueMarker();
    const running = await startedId(http, session, `exec -a ${marker} sleep 300`, 2);
    const task = await post(
      http.url,
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'sandboxed_shell', arguments: { command: 'echo task' }, task: {} },
      },
      { 'mcp-session-id': session, accept: 'application/json' },
    );
    context.expect(task.status).toBe(200);
    await task.text();
    await waitFor(
      () => engine.operations.status([done])[0]?.status === 'completed',
      'the first command to end',
    );
    await waitFor(async () => (await processesMatching(marker)).length > 0, 'the sleep to run');

    // The task's echo ends on its own time: under load it may still run when the push is stored.
    const held = await waitFor(() => {
      const now = live.held();
      return now.events > 1 && now.running === 1 ? now : undefined;
    }, "the push to be stored and the task's command to end");
    // The sleep runs (its push pending); the echo and the task have ended.
    context.expect(held).toMatchObject({ running: 1, pushes: 1, tasks: 1 });
    context.expect(held.eventBytes).toBeGreaterThan(0);
    context.expect(held.subscriptions).toBeGreaterThan(0);
    const during = engine.operations.listenerCounts;
    context.expect(during.complete).toBeGreaterThan(before.complete);
    context.expect(during.alert).toBeGreaterThan(before.alert);

    context.expect((await deleteSession(http, session)).status).toBe(200);
    context.expect(live.held()).toEqual({
      events: 0,
      eventBytes: 0,
      running: 0,
      pushes: 0,
      tasks: 0,
      subscriptions: 0,
    });
    context.expect(engine.operations.listenerCounts).toEqual(before);
    context.expect(engine.operations.status([running])[0]?.status).toBe('cancelled');
    context.expect(http.server.sessions.size).toBe(0);
  });

  it("R8.4: an ended session's operations keep only a summary of their results: status still answers them, with the end of their output and the log holding the whole", async (context) => {
    const e2e = setup(context);
    const http = await httpServer(e2e, await e2e.scope(), ['--inline-wait', '0']);
    const session = await rawSession(http.url);
    // 20 KB: kept whole in memory while the session lives (no log); 100 KB: a log holds it all.
    const medium = await startedId(http, session, printing(20_000, 'medium-end'), 1);
    const large = await startedId(http, session, printing(100_000, 'large-end'), 2);
    const whole = operationsOf(
      await callTool(http.url, session, 'await', { ids: [medium, large] }, 3),
    );
    context.expect(whole.map((o) => o.status)).toEqual(['completed', 'completed']);
    context.expect(Buffer.byteLength(whole[0]?.output ?? '')).toBeGreaterThan(20_000);
    const log = whole[1]?.full_output_path ?? '';
    context.expect(log).not.toBe('');

    context.expect((await deleteSession(http, session)).status).toBe(200);

    // Another session asks about them.
    const other = await rawSession(http.url);
    const [mediumNow, largeNow] = operationsOf(
      await callTool(http.url, other, 'status', { ids: [medium, large] }, 1),
    );
    if (mediumNow === undefined || largeNow === undefined) throw new Error('not listed');
    for (const [now, end] of [
      [mediumNow, 'medium-end'],
      [largeNow, 'large-end'],
    ] as const) {
      context.expect(now).toMatchObject({ status: 'completed', exit_code: 0, truncated: true });
      context.expect(Buffer.byteLength(now.output)).toBeLessThan(5 * 1024);
      context.expect(now.output).toMatch(/the session that started the operation has ended/);
      context.expect(now.output.endsWith(`${end}\n`)).toBe(true);
    }
    context.expect(mediumNow.full_output_path).toBeUndefined();
    // The log still holds the whole output, and the summary still names it.
    context.expect(largeNow.full_output_path).toBe(log);
    context.expect(largeNow.output).toContain(`full output: ${log}`);
    const full = await readFile(log, 'utf8');
    context.expect(full.length).toBeGreaterThan(100_000);
    context.expect(full.endsWith('large-end\n')).toBe(true);
  });

  it("R8.4: another session's operations are not summarized when one session ends", async (context) => {
    const e2e = setup(context);
    const http = await httpServer(e2e, await e2e.scope(), ['--inline-wait', '0']);
    const [ending, staying] = [await rawSession(http.url), await rawSession(http.url)];
    const mine = await startedId(http, staying, printing(20_000, 'staying-end'), 1);
    await startedId(http, ending, printing(20_000, 'ending-end'), 1);
    await callTool(http.url, staying, 'await', { ids: [mine] }, 2);
    context.expect((await deleteSession(http, ending)).status).toBe(200);
    const [result] = http.runtime.engine.operations.status([mine]);
    context.expect(result?.result?.truncated).toBe(false);
    context.expect(Buffer.byteLength(result?.result?.output ?? '')).toBeGreaterThan(20_000);
  });
});
