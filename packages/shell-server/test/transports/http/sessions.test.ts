// R8.4: abandoned sessions do not pile up, and strangers can neither end a session in use nor
// multiply sessions without bound. An idle session (no open exchange, no running command) is ended
// after the idle timeout and its id answers 404; a connected SDK client (its GET stream open) or a
// running command keeps a session; at the cap a new session ends the longest-idle one of those
// idle for long enough, and is refused with 503 naming the limit when none is; one remote address
// holds at most half the places. Short limits: the session table alone with fake sessions, and the
// real server in the test process.
import { networkInterfaces } from 'node:os';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionProcess } from '../../../src/transports/http/session/session-backend.js';
import { parseCommandLine } from '../../../src/cli/options.js';
import {
  DEFAULT_EVICTABLE_IDLE_MS,
  peerKey,
  SESSION_PROCESS_ESTIMATE_BYTES,
  sessionLimitsOf,
  SessionTable,
  type LiveSession,
  type SessionLimits,
} from '../../../src/transports/http/sessions.js';
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
      sessionLimits: { idleTimeoutMs: 60_000, maxSessions: 2, evictableIdleMs: 0 },
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
      sessionLimits: { idleTimeoutMs: 60_000, maxSessions: 2, evictableIdleMs: 0 },
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
      error: { message: expect.stringContaining('--max-sessions') },
    });
  });

  it('R8.4: initialize requests from another local process do not end a session that made a request a moment ago; past the cap they get 503 naming it', async () => {
    const http = await httpServer(e2e, await e2e.scope(), [], {
      sessionLimits: { idleTimeoutMs: 60_000, maxSessions: 10 },
    });
    const mine = await rawSession(http.url);
    expect((await post(http.url, TOOLS_LIST, { 'mcp-session-id': mine })).status).toBe(200);
    const statuses: number[] = [];
    let refusal: unknown;
    for (let i = 0; i < 30; i++) {
      const response = await post(http.url, INITIALIZE, { accept: 'application/json' });
      statuses.push(response.status);
      if (response.status === 503) {
        expect(response.headers.get('retry-after')).toBe('60');
        refusal = await response.json();
      } else {
        await response.text();
      }
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(9);
    expect(statuses.filter((status) => status === 503)).toHaveLength(21);
    expect(refusal).toMatchObject({
      error: {
        message: expect.stringMatching(/limit of 10 \(--max-sessions\).*idle for 5 minutes/),
      },
    });
    expect((await post(http.url, TOOLS_LIST, { 'mcp-session-id': mine })).status).toBe(200);
  });

  const external = Object.values(networkInterfaces())
    .flat()
    .find((address) => address !== undefined && address.family === 'IPv4' && !address.internal);
  it.skipIf(external === undefined)(
    'R8.4: one remote address holds at most half the places, and the local clients keep the rest',
    async () => {
      const token = 'a-token-for-the-per-peer-test';
      const http = await httpServer(e2e, await e2e.scope(), [], {
        host: '0.0.0.0',
        token,
        sessionLimits: { idleTimeoutMs: 60_000, maxSessions: 4 },
      });
      const auth = { authorization: `Bearer ${token}` };
      const remote = `http://${external?.address ?? ''}:${String(http.port)}/mcp`;
      await rawSession(remote, auth);
      await rawSession(remote, auth);
      const refused = await post(remote, INITIALIZE, { accept: 'application/json', ...auth });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('60');
      expect(await refused.json()).toMatchObject({
        error: { message: expect.stringContaining('at most 2 of the server') },
      });
      // The same server over loopback: another peer.
      await rawSession(http.url, auth);
      await rawSession(http.url, auth);
      expect(http.server.sessions.size).toBe(4);
    },
  );
});

/** A session of the table alone: its running operations are set by the test. */
class FakeSession implements LiveSession {
  running = 0;
  closed = false;
  constructor(
    readonly id: string,
    private readonly table: () => SessionTable,
  ) {}
  runningOperations(): number {
    return this.running;
  }
  close(): Promise<void> {
    this.closed = true;
    this.table().closed(this);
    return Promise.resolve();
  }
}

const silent = pino({ level: 'silent' });

/** A table with `limits`; `open(peer)` reserves and opens a fake session, or returns the refusal. */
function table(limits: SessionLimits, options: ConstructorParameters<typeof SessionTable>[2] = {}) {
  const sessions = new SessionTable(limits, silent, options);
  e2e.onCleanup(() => sessions.closeAll());
  let ids = 0;
  return {
    sessions,
    async open(peer = 'loopback') {
      const refusal = await sessions.reserve(peer);
      if (refusal !== undefined) return refusal;
      const session = new FakeSession(`s${String(++ids)}`, () => sessions);
      sessions.opened('streamable', session, peer);
      return session;
    },
  };
}

const isSession = (value: unknown): value is FakeSession => value instanceof FakeSession;

describe('the session table', () => {
  it('R8.4: a session that made a request within the last minutes is never ended to make room; once idle longer it may be', async () => {
    const { sessions, open } = table({
      idleTimeoutMs: 60_000,
      maxSessions: 2,
      evictableIdleMs: 150,
    });
    const a = await open();
    const b = await open();
    if (!isSession(a) || !isSession(b)) throw new Error('not opened');
    const refused = await open();
    expect(refused).toMatchObject({
      what: 'session',
      rule: 'max-sessions',
      status: 503,
      headers: { 'Retry-After': '60' },
    });
    expect(a.closed || b.closed).toBe(false);

    await sleep(200);
    // b makes a request: only a may go now.
    sessions.begin(b)();
    const c = await open();
    expect(isSession(c)).toBe(true);
    expect(a.closed).toBe(true);
    expect(b.closed).toBe(false);
    // A session with a running command, or an open exchange, stays however long it was idle.
    b.running = 1;
    if (isSession(c)) sessions.begin(c);
    await sleep(200);
    expect(await open()).toMatchObject({ rule: 'max-sessions' });
    expect(sessions.size).toBe(2);
  });

  it('R8.4: the default grace is 5 minutes', () => {
    expect(DEFAULT_EVICTABLE_IDLE_MS).toBe(5 * 60 * 1000);
  });

  it('R8.4: places being opened count, so concurrent initialize requests cannot pass the cap; a place given back is free again', async () => {
    const { sessions } = table({ idleTimeoutMs: 60_000, maxSessions: 2, evictableIdleMs: 0 });
    const reservations = await Promise.all([
      sessions.reserve('loopback'),
      sessions.reserve('loopback'),
      sessions.reserve('loopback'),
    ]);
    expect(reservations.filter((refusal) => refusal === undefined)).toHaveLength(2);
    sessions.opened('streamable', undefined, 'loopback');
    expect(await sessions.reserve('loopback')).toBeUndefined();
  });

  it('R8.4: a remote peer holds at most half the places and ends only its own idle sessions; loopback and the unix socket only the cap', async () => {
    const { sessions, open } = table({
      idleTimeoutMs: 60_000,
      maxSessions: 6,
      evictableIdleMs: 50,
    });
    expect(sessions.maxSessionsPerPeer).toBe(3);
    const remote = [
      await open('203.0.113.7'),
      await open('203.0.113.7'),
      await open('203.0.113.7'),
    ];
    expect(remote.every(isSession)).toBe(true);
    const refused = await open('203.0.113.7');
    expect(refused).toMatchObject({
      what: 'session',
      rule: 'per-peer',
      status: 503,
      headers: { 'Retry-After': '60' },
    });
    expect(refused).toMatchObject({ message: expect.stringContaining('at most 3 of the server') });
    // Another address is another peer; loopback takes what is left.
    expect(isSession(await open('198.51.100.2'))).toBe(true);
    expect(isSession(await open('loopback'))).toBe(true);
    expect(isSession(await open('unix'))).toBe(true);
    expect(await open('unix')).toMatchObject({ rule: 'max-sessions' });

    // Idle long enough: the remote peer at its cap ends its own longest-idle session, no other.
    await sleep(80);
    const replaced = await open('203.0.113.7');
    expect(isSession(replaced)).toBe(true);
    expect(remote.filter((session) => isSession(session) && session.closed)).toHaveLength(1);
    expect((remote[0] as FakeSession).closed).toBe(true);
    expect(sessions.size).toBe(6);
  });

  it('R8.4: a cap of 1 still lets one remote peer in', async () => {
    const { open, sessions } = table({ idleTimeoutMs: 60_000, maxSessions: 1 });
    expect(sessions.maxSessionsPerPeer).toBe(1);
    expect(isSession(await open('203.0.113.7'))).toBe(true);
  });

  it('R8.4: the memory budget counts the session processes (measured, or estimated while starting or unmeasured), refuses naming it, and ends idle sessions to make room', async () => {
    const MIB = 1024 * 1024;
    const processes: SessionProcess[] = [];
    const rss = new Map<number, number>();
    const { sessions, open } = table(
      { idleTimeoutMs: 60_000, maxSessions: 10, evictableIdleMs: 100, sessionMemoryMb: 350 },
      { processes: () => processes, residentBytes: (pid) => rss.get(pid) },
    );
    expect(SESSION_PROCESS_ESTIMATE_BYTES).toBe(80 * MIB);
    const a = await open();
    const b = await open();
    if (!isSession(a) || !isSession(b)) throw new Error('not opened');
    processes.push(
      { sessionId: a.id, pid: 1, live: true },
      { sessionId: b.id, pid: 2, live: true },
    );
    rss.set(1, 90 * MIB).set(2, 110 * MIB);
    // A place reserved whose process has not started: counted at the estimate, their mean.
    expect(await sessions.reserve('loopback')).toBeUndefined();
    const refused = await sessions.reserve('loopback');
    expect(refused).toMatchObject({
      what: 'session',
      rule: 'memory',
      status: 503,
      headers: { 'Retry-After': '60' },
    });
    expect(refused?.message).toMatch(
      /use 300 MiB of the 350 MiB budget \(--session-memory-mb\) and a new one needs about 100 MiB/,
    );
    // Started, not measured yet: still the estimate.
    processes.push({ sessionId: undefined, pid: 3, live: true });
    expect(await sessions.reserve('loopback')).toMatchObject({ rule: 'memory' });
    // It never opened, and ended by itself: no process any more, the place given back.
    processes[2] = { sessionId: undefined, pid: undefined, live: false };
    sessions.opened('streamable', undefined, 'loopback');
    expect(await sessions.reserve('loopback')).toBeUndefined();
    expect(await sessions.reserve('loopback')).toMatchObject({ rule: 'memory' });
    expect(a.closed || b.closed).toBe(false);

    // Idle for long enough, a makes room (b made a request); its memory is what it frees.
    await sleep(150);
    sessions.begin(b)();
    const c = await open();
    expect(isSession(c)).toBe(true);
    expect(a.closed).toBe(true);
    expect(b.closed).toBe(false);
  });

  it('R8.4: peers: every local TCP client is one peer, the unix socket another, others by address', () => {
    expect(peerKey('127.0.0.1', false)).toBe('loopback');
    expect(peerKey('127.0.0.2', false)).toBe('loopback');
    expect(peerKey('::1', false)).toBe('loopback');
    expect(peerKey('::ffff:127.0.0.1', false)).toBe('loopback');
    expect(peerKey('::ffff:192.0.2.4', false)).toBe('192.0.2.4');
    expect(peerKey('2001:DB8::1', false)).toBe('2001:db8::1');
    expect(peerKey(undefined, true)).toBe('unix');
    expect(peerKey('127.0.0.1', true)).toBe('unix');
  });

  it('R8.4: the limits of the command line: 100 sessions, 16 with --session-isolation and a memory budget of 2048 MiB, or --max-sessions', () => {
    const limits = (...args: string[]) => {
      const parsed = parseCommandLine(['--mode', 'http', ...args], {});
      if (parsed.kind !== 'run') throw new Error('not a run');
      return sessionLimitsOf(parsed.options);
    };
    expect(limits()).toMatchObject({ maxSessions: 100, sessionMemoryMb: undefined });
    expect(limits('--session-isolation')).toMatchObject({ maxSessions: 16, sessionMemoryMb: 2048 });
    expect(
      limits('--session-isolation', '--max-sessions', '4', '--session-memory-mb', '512'),
    ).toMatchObject({ maxSessions: 4, sessionMemoryMb: 512 });
    expect(limits('--max-sessions', '7')).toMatchObject({ maxSessions: 7 });
  });
});
