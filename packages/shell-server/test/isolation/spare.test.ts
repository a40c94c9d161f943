// R8D.3: an isolated session's process started ahead (isolation/spare.ts) — the real ahma-shell,
// waiting with no scope, given one on stdin, then serving on it as a process started with
// --sandbox-scope does; and, over HTTP, the session that locks its scope takes it.
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionChild } from '../../src/isolation/child.js';
import { SpareProcess } from '../../src/isolation/spare.js';
import { SCOPE_FROM_STDIN } from '../../src/isolation/spare-scope.js';
import {
  BIN,
  cwdOf,
  descendantsOf,
  E2E,
  exists,
  processInfo,
  sessionProcessesOn,
  waitFor,
} from '../support/harness.js';
import { callTool, isolatedHttpServer, rawSession } from '../support/http.js';

const e2e = new E2E();
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
  await e2e.cleanup();
});

async function spareOn(env: Record<string, string>): Promise<SpareProcess> {
  const spare = new SpareProcess({
    command: { file: process.execPath, args: [BIN, '--mode', 'stdio'] },
    env,
    logger: pino({ level: 'silent' }),
    stopGraceMs: 2_000,
  });
  stops.push(() => spare.close());
  return spare;
}

/** Reads the spare's answers by id once a scope is assigned. */
function assigned(child: SessionChild, scope: string) {
  const answers = new Map<number, Record<string, unknown>>();
  const ok = child.assign(scope, {
    onLine: (line) => {
      const message = JSON.parse(line) as { id?: number } & Record<string, unknown>;
      if (typeof message.id === 'number') answers.set(message.id, message);
    },
    onStderrLine: () => undefined,
    onExit: () => undefined,
  });
  stops.push(() => child.stop(2_000));
  const request = (id: number, method: string, params: Record<string, unknown> = {}) => {
    child.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return waitFor(() => answers.get(id), `the answer to ${method}`, 15_000);
  };
  return { ok, request };
}

describe('a spare session process', () => {
  it('R8D.3: starts with no scope, takes the one given on stdin, and serves on it; a new spare replaces it', async () => {
    const scope = await e2e.scope();
    const spare = await spareOn(scope.env);
    const pid = spare.pid ?? 0;
    expect((await processInfo(pid))?.cmdline).toMatch(new RegExp(`${SCOPE_FROM_STDIN}$`));
    expect((await processInfo(pid))?.cmdline).not.toContain('--sandbox-scope');

    const child = spare.take();
    expect(child?.pid).toBe(pid);
    expect(spare.pid).toBeDefined();
    expect(spare.pid).not.toBe(pid);
    if (child === undefined) throw new Error('no spare');
    const session = assigned(child, scope.dir);
    expect(session.ok).toBe(true);
    await session.request(1, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'spare-test', version: '1' },
    });
    child.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    const listed = (await session.request(2, 'tools/list')) as {
      result: { tools: { name: string }[] };
    };
    expect(listed.result.tools.map((tool) => tool.name)).toContain('sandboxed_shell');
    const called = (await session.request(3, 'tools/call', {
      name: 'sandboxed_shell',
      arguments: { command: 'pwd' },
    })) as { result: { content: { text: string }[] } };
    expect(called.result.content.map((part) => part.text).join('')).toContain(scope.dir);
    expect(await cwdOf(pid)).toBe(scope.dir);
    // A scope is given once.
    expect(child.assign(scope.dir, { onLine() {}, onStderrLine() {}, onExit() {} })).toBe(false);
  });

  it('R8D.10: a spare no session took is stopped with the server and leaves nothing; one that died is not handed out', async () => {
    const scope = await e2e.scope();
    const spare = await spareOn(scope.env);
    const first = spare.pid ?? 0;
    process.kill(first, 'SIGKILL');
    await waitFor(() => !exists(first), 'the killed spare to be gone');
    await waitFor(() => spare.pid === undefined, 'the dead spare to be dropped');
    // None to hand out: the session starts its own process, and a spare starts for the next.
    expect(spare.take()).toBeUndefined();
    const second = spare.pid ?? 0;
    expect(second).toBeGreaterThan(0);
    await spare.close();
    expect(exists(second)).toBe(false);
    expect(spare.take()).toBeUndefined();
    expect(spare.pid).toBeUndefined();
  });

  it('R8D.3: over HTTP, the isolated session that locks its scope is served by the process started before it', async () => {
    const scope = await e2e.scope();
    const http = await isolatedHttpServer(e2e, scope, [], { spareProcess: true });
    const spares = () => sparesBelow(process.pid);
    const before = await waitFor(async () => {
      const found = await spares();
      return found.length === 1 ? found : undefined;
    }, 'the spare to start');
    const session = await rawSession(http.url);
    // A client without roots: the session locks the server's scope.
    const answer = await callTool(http.url, session, 'sandboxed_shell', { command: 'pwd' });
    expect(JSON.stringify(answer)).toContain(scope.dir);
    const served = await sessionProcessesOn(process.pid, scope.dir);
    expect(served.map((info) => info.pid)).toEqual([before[0]?.pid]);
    // And the next session's is waiting.
    const after = await spares();
    expect(after).toHaveLength(1);
    expect(after[0]?.pid).not.toBe(before[0]?.pid);
  });
});

/**
 * The spares below `pid` that no session took: started with the word (a taken one keeps it on its
 * command line), still in / (a taken one moves into its scope).
 */
async function sparesBelow(pid: number) {
  const started = (await descendantsOf(pid)).filter((info) =>
    info.cmdline.endsWith(SCOPE_FROM_STDIN),
  );
  const cwds = await Promise.all(started.map((info) => cwdOf(info.pid)));
  return started.filter((_, index) => cwds[index] === '/');
}
