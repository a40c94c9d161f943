// Session isolation (R8D) without HTTP: the SDK's real Client over InMemoryTransport is the
// session's client, the BUILT ahma-shell (run `pnpm build` first) is each session's process, and
// the sandbox is real. The scope comes from the client's first root and is locked; roots changing
// after the lock ends the session; a crashed process is restarted once (R8.5); close() leaves no
// process behind.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  type CallToolResult,
  type JSONRPCMessage,
  type LoggingMessageNotification,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { pino, type Logger } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createIsolatedSession,
  type IsolatedSession,
  type TerminationReason,
} from '../../src/isolation/isolated-session.js';
import {
  BIN,
  E2E,
  PACKAGE_DIR,
  descendantsOf,
  processInfo,
  processesMatching,
  pushedId,
  structured,
  textOf,
  waitFor,
  type CommandResult,
  type Scope,
  type StartedResult,
} from '../support/harness.js';

const e2e = new E2E();
const opened: Isolated[] = [];
afterEach(async () => {
  const sessions = opened.splice(0);
  await Promise.all(sessions.map((session) => session.close()));
  await e2e.cleanup();
  // SPEC §3: nothing passed on may make the SDK Client report an error.
  expect(sessions.flatMap((session) => session.clientErrors.map((error) => error.message))).toEqual(
    [],
  );
});

interface Isolated {
  readonly client: Client;
  readonly session: IsolatedSession;
  readonly terminations: TerminationReason[];
  /** The session's log, one object per line. */
  readonly log: Record<string, unknown>[];
  /** Messages the session sent to the client, in order. */
  readonly sent: JSONRPCMessage[];
  /** notifications/message the client received (completion pushes). */
  readonly messages: LoggingMessageNotification['params'][];
  /** Errors the SDK Client reported (a progress notification for an unknown token is one). */
  readonly clientErrors: Error[];
  /** sandboxed_shell, synchronous: the command's result (or the refusal's text, thrown). */
  shell(command: string): Promise<CommandResult>;
  close(): Promise<void>;
}

interface IsolatedOptions {
  /** The server's default scope (and the environment the processes get). */
  readonly server: Scope;
  /** The client's first root (a directory, or a URI as is); none: the client declares no roots. */
  readonly root?: string;
  readonly rootsTimeoutMs?: number;
  /** Answers roots/list never (the client declares roots but does not answer). */
  readonly silentRoots?: boolean;
  /** Drops the session's first roots/list, as HTTP does before the client's GET stream exists. */
  readonly dropFirstRootsRequest?: boolean;
  /** More flags for the session's processes. */
  readonly childArgs?: readonly string[];
  /** Where roots are allowed besides /var/tmp (where the e2e directories are). */
  readonly allowedRoots?: readonly string[];
}

function captureLogger(lines: Record<string, unknown>[]): Logger {
  return pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) {
          if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
        }
        done();
      },
    }),
  );
}

async function isolated(options: IsolatedOptions): Promise<Isolated> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const sent: JSONRPCMessage[] = [];
  let dropped = false;
  const send = serverSide.send.bind(serverSide);
  serverSide.send = async (message, sendOptions) => {
    if (
      options.dropFirstRootsRequest === true &&
      !dropped &&
      'method' in message &&
      message.method === 'roots/list'
    ) {
      dropped = true;
      return;
    }
    sent.push(message);
    return send(message, sendOptions);
  };
  const log: Record<string, unknown>[] = [];
  const terminations: TerminationReason[] = [];
  const session = createIsolatedSession({
    upstream: serverSide,
    answerInitialize: await e2e.initializeAnswerer(options.server, options.childArgs),
    defaultScope: options.server.dir,
    roots: {
      allowed: ['/var/tmp', ...(options.allowedRoots ?? [])],
      forbidden: [],
      privatePaths: [],
    },
    childCommand: {
      file: process.execPath,
      args: [BIN, '--mode', 'stdio', ...(options.childArgs ?? [])],
    },
    env: options.server.env,
    logger: captureLogger(log),
    ...(options.rootsTimeoutMs === undefined ? {} : { rootsTimeoutMs: options.rootsTimeoutMs }),
    onTerminated: (reason) => terminations.push(reason),
  });
  const root = options.root;
  const client = new Client(
    { name: 'ahma-isolation-test', version: '1.0.0' },
    { capabilities: root === undefined ? {} : { roots: { listChanged: true } } },
  );
  if (root !== undefined) {
    client.setRequestHandler(ListRootsRequestSchema, () =>
      options.silentRoots === true
        ? new Promise<never>(() => undefined)
        : {
            roots: [
              { uri: root.includes(':') ? root : pathToFileURL(root).href, name: 'project' },
              { uri: pathToFileURL(options.server.dir).href, name: 'second root, never used' },
            ],
          },
    );
  }
  const clientErrors: Error[] = [];
  client.onerror = (error) => clientErrors.push(error);
  const messages: LoggingMessageNotification['params'][] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    messages.push(notification.params);
  });
  await client.connect(clientSide);
  const handle: Isolated = {
    client,
    session,
    terminations,
    log,
    sent,
    messages,
    clientErrors,
    shell: async (command) => {
      const result = (await client.callTool({
        name: 'sandboxed_shell',
        arguments: { command, execution_mode: 'Synchronous' },
      })) as CallToolResult;
      if (result.structuredContent === undefined) throw new Error(textOf(result));
      return structured<CommandResult>(result);
    },
    close: async () => {
      await session.close();
      await client.close();
    },
  };
  opened.push(handle);
  return handle;
}

/** The session's current process. */
function pidOf(s: Isolated): number {
  const pid = s.session.childPid;
  if (pid === undefined) throw new Error('the session has no process');
  return pid;
}

/** The processes of a session: its server process and everything below it. */
async function treeOf(pid: number): Promise<number[]> {
  return [pid, ...(await descendantsOf(pid)).map((info) => info.pid)];
}

async function live(pids: readonly number[]): Promise<number[]> {
  const infos = await Promise.all(pids.map((pid) => processInfo(pid)));
  return infos.flatMap((info) => (info === undefined || info.state === 'Z' ? [] : [info.pid]));
}

describe('R8D isolated sessions: the scope', () => {
  it("R8D.7, R8D.14: the session's process runs on the client's first root; a write inside it works, one outside fails", async () => {
    const server = await e2e.scope();
    const project = await e2e.scope();
    const s = await isolated({ server, root: project.dir });

    const pwd = await s.shell('pwd');
    expect(pwd.output.trim()).toBe(project.dir);
    expect(s.session.scope).toBe(project.dir);
    expect((await processInfo(pidOf(s)))?.cmdline).toContain(`--sandbox-scope ${project.dir}`);

    const inside = await s.shell(`echo inside > ${join(project.dir, 'inside.txt')}`);
    expect(inside.exit_code).toBe(0);
    expect(await readFile(join(project.dir, 'inside.txt'), 'utf8')).toBe('inside\n');
    // The server's own scope is outside the session's: not writable from it.
    const outside = await s.shell(`echo outside > ${join(server.dir, 'outside.txt')}`);
    expect(outside.exit_code).not.toBe(0);
    await expect(readFile(join(server.dir, 'outside.txt'), 'utf8')).rejects.toThrow();
    expect(s.log.some((line) => line['msg'] === 'isolated session: sandbox scope locked')).toBe(
      true,
    );
  });

  it('R8D.3: two sessions with different roots run in two processes and cannot write into each other', async () => {
    const server = await e2e.scope();
    const [a, b] = await Promise.all([e2e.scope(), e2e.scope()]);
    const [sa, sb] = await Promise.all([
      isolated({ server, root: a.dir }),
      isolated({ server, root: b.dir }),
    ]);
    expect((await sa.shell('pwd')).output.trim()).toBe(a.dir);
    expect((await sb.shell('pwd')).output.trim()).toBe(b.dir);
    expect(sa.session.childPid).not.toBe(sb.session.childPid);

    expect((await sa.shell(`echo a > ${join(b.dir, 'from-a.txt')}`)).exit_code).not.toBe(0);
    expect((await sb.shell(`echo b > ${join(a.dir, 'from-b.txt')}`)).exit_code).not.toBe(0);
    expect((await sa.shell(`echo a > ${join(a.dir, 'own.txt')}`)).exit_code).toBe(0);
    expect((await sb.shell(`echo b > ${join(b.dir, 'own.txt')}`)).exit_code).toBe(0);
    await expect(readFile(join(b.dir, 'from-a.txt'), 'utf8')).rejects.toThrow();
    await expect(readFile(join(a.dir, 'from-b.txt'), 'utf8')).rejects.toThrow();
  });

  it('R8D.9: a client without the roots capability gets the server scope at once, served by one process, no roots asked', async () => {
    const server = await e2e.scope();
    const s = await isolated({ server });
    const first = s.session.childPid;
    expect((await s.shell('pwd')).output.trim()).toBe(server.dir);
    expect(s.session.scope).toBe(server.dir);
    expect(first).toBeDefined(); // started at the lock, right after initialized
    expect(s.session.childPid).toBe(first);
    expect(s.sent.some((message) => 'method' in message && message.method === 'roots/list')).toBe(
      false,
    );
  });

  it('R8D.9: a client that declares roots but never answers gets the server scope after the bounded wait, logged', async () => {
    const server = await e2e.scope();
    const project = await e2e.scope();
    const s = await isolated({ server, root: project.dir, silentRoots: true, rootsTimeoutMs: 300 });
    expect((await s.shell('pwd')).output.trim()).toBe(server.dir);
    expect(s.session.scope).toBe(server.dir);
    const why = s.log.find(
      (line) => line['msg'] === 'isolated session: no usable roots, using the server scope',
    );
    expect(why?.['why']).toMatch(/did not arrive within 300 ms/);
  });

  it('R8D.7: a roots/list that never reached the client is asked again, on the stream of its next request', async () => {
    const server = await e2e.scope();
    const project = await e2e.scope();
    const s = await isolated({ server, root: project.dir, dropFirstRootsRequest: true });
    expect((await s.shell('pwd')).output.trim()).toBe(project.dir);
    expect(s.sent.filter((m) => 'method' in m && m.method === 'roots/list')).toHaveLength(1);
  });

  it('R8D.8: a call sent before the scope is locked waits for the lock and runs in the locked scope', async () => {
    const server = await e2e.scope();
    const project = await e2e.scope();
    // connect() returns once initialized is sent: the roots are asked after it, so these calls
    // arrive before the scope is locked, when no process runs yet (initialize was the session's).
    const late = await isolated({ server, root: project.dir });
    expect(late.session.scope).toBeUndefined();
    expect(late.session.childPid).toBeUndefined();
    const [pwd, touched] = await Promise.all([
      late.shell('pwd'),
      late.shell(`touch ${join(project.dir, 'early.txt')} && echo ok`),
    ]);
    expect(pwd.output.trim()).toBe(project.dir);
    expect(touched.output.trim()).toBe('ok');
  });

  it('R8D.7: a first root that is not a usable directory (/, missing, not file://) ends the session with a clear error', async () => {
    const server = await e2e.scope();
    const missing = join(server.dir, 'no-such-dir');
    for (const [root, message] of [
      ['file:///', /filesystem root/],
      [missing, /does not exist/],
      ['https://example.com/project', /not a file:\/\/ URI/],
    ] as const) {
      const s = await isolated({ server, root });
      await expect(s.client.listTools()).rejects.toThrow(message);
      expect(s.terminations).toEqual(['invalid_root']);
      expect(s.session.terminated).toBe('invalid_root');
      expect(s.session.scope).toBeUndefined();
      await expect(s.client.listTools()).rejects.toThrow(/cannot start/);
    }
  });
});

describe('R8D.3 every message passes both ways', () => {
  it("R8D.3: progress of an open call, the completion push of an answered one and the client's log level reach their side", async () => {
    const base = await e2e.scope();
    const server = { ...base, env: { ...base.env, AHMA_TEST_HEARTBEAT_MS: '100' } };
    const project = await e2e.scope();
    const s = await isolated({ server, root: project.dir, childArgs: ['--inline-wait', '0'] });
    await s.client.setLoggingLevel('debug');

    const progress: Progress[] = [];
    const result = (await s.client.callTool(
      {
        name: 'sandboxed_shell',
        arguments: { command: 'sleep 0.6; echo done', execution_mode: 'Synchronous' },
      },
      undefined,
      { onprogress: (p) => progress.push(p) },
    )) as CallToolResult;
    expect(structured<CommandResult>(result).output).toBe('done\n');
    expect(progress.length).toBeGreaterThan(0);

    const started = structured<StartedResult>(
      (await s.client.callTool({
        name: 'sandboxed_shell',
        arguments: { command: 'sleep 0.3; echo pushed' },
      })) as CallToolResult,
    );
    expect(started.status).toBe('started');
    await waitFor(
      () => s.messages.find((message) => pushedId(message) === started.operation_id),
      'the completion push',
    );
  });
});

describe('R8D.12 roots changing after the lock', () => {
  it('R8D.12, R8D.13: roots/list_changed after the lock ends the session at once, logged, its process gone, later requests refused', async () => {
    const server = await e2e.scope();
    const project = await e2e.scope();
    const s = await isolated({ server, root: project.dir });
    expect((await s.shell('pwd')).output.trim()).toBe(project.dir);
    const tree = await treeOf(pidOf(s));

    await s.client.sendRootsListChanged();
    await waitFor(() => s.terminations.length > 0, 'the session to end');
    expect(s.terminations).toEqual(['roots_changed']);
    expect(s.session.terminated).toBe('roots_changed');
    expect(s.session.scope).toBe(project.dir); // still the locked one: it never changes
    const error = s.log.find((line) => line['level'] === 50);
    expect(error?.['msg']).toMatch(/roots changed after its sandbox scope was locked/);
    await waitFor(async () => (await live(tree)).length === 0, 'the session processes to go');
    await expect(s.client.listTools()).rejects.toThrow(/roots changed/);
  });
});

describe('R8.5 a session process that dies', () => {
  it('R8.5: a SIGKILLed session process is restarted on the same scope and the session goes on', async () => {
    const server = await e2e.scope();
    const project = await e2e.scope();
    const s = await isolated({ server, root: project.dir });
    expect((await s.shell('pwd')).output.trim()).toBe(project.dir);
    const first = pidOf(s);
    process.kill(first, 'SIGKILL');
    await waitFor(
      () => s.session.childPid !== undefined && s.session.childPid !== first,
      'a new session process',
    );
    expect((await s.shell('pwd')).output.trim()).toBe(project.dir);
    expect((await s.client.listTools()).tools.length).toBeGreaterThan(0);
    expect(s.session.terminated).toBeUndefined();
    expect((await processInfo(pidOf(s)))?.cmdline).toContain(`--sandbox-scope ${project.dir}`);
  });

  it('R8.5: a process that dies again right after its restart ends the session with a clear error; its open call gets it, other sessions go on', async () => {
    const server = await e2e.scope();
    const [project, other] = await Promise.all([e2e.scope(), e2e.scope()]);
    const [s, bystander] = await Promise.all([
      isolated({ server, root: project.dir }),
      isolated({ server, root: other.dir }),
    ]);
    expect((await s.shell('pwd')).output.trim()).toBe(project.dir);
    const first = pidOf(s);
    process.kill(first, 'SIGKILL');
    await waitFor(
      () => s.session.childPid !== undefined && s.session.childPid !== first,
      'a new session process',
    );
    expect((await s.shell('pwd')).output.trim()).toBe(project.dir);

    const open = s.shell('sleep 30');
    await waitFor(async () => (await processesMatching('sleep 30')).length > 0, 'the command');
    process.kill(pidOf(s), 'SIGKILL');
    await expect(open).rejects.toThrow(/the session's server process exited \(killed by SIGKILL\)/);
    expect(s.terminations).toEqual(['child_failed']);
    await expect(s.client.listTools()).rejects.toThrow(/cannot continue: start a new session/);

    expect((await bystander.shell('pwd')).output.trim()).toBe(other.dir);
    expect(bystander.session.terminated).toBeUndefined();
  });
});

describe('R8.5 a session process that cannot start', () => {
  it("R8.5, R8.12: a root the server refuses to serve (its own code lies in it) ends the session with the process's reason", async () => {
    const server = await e2e.scope();
    const s = await isolated({ server, root: PACKAGE_DIR, allowedRoots: [PACKAGE_DIR] });
    // R8.12: the process answers the replayed initialize with its reason.
    await expect(s.client.listTools()).rejects.toThrow(
      /its server process refused the session's initialize \(ahma-shell cannot start: Ahma refuses to start: its own code lies where sandboxed commands can write/,
    );
    expect(s.terminations).toEqual(['child_failed']);
    expect(s.session.scope).toBe(PACKAGE_DIR.replace(/\/$/, ''));
  });

  it('R8.5: a session program that cannot be started at all ends the session with a clear error at its first request', async () => {
    const server = await e2e.scope();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const terminations: TerminationReason[] = [];
    const session = createIsolatedSession({
      upstream: serverSide,
      answerInitialize: await e2e.initializeAnswerer(server),
      defaultScope: server.dir,
      roots: { allowed: ['/var/tmp'], forbidden: [], privatePaths: [] },
      childCommand: { file: join(server.dir, 'no-such-program'), args: [] },
      env: server.env,
      logger: captureLogger([]),
      onTerminated: (reason) => terminations.push(reason),
    });
    const client = new Client({ name: 'ahma-isolation-test', version: '1.0.0' });
    try {
      // initialize is the session's to answer; its process starts once the scope is locked.
      await client.connect(clientSide);
      await expect(client.listTools()).rejects.toThrow(
        /the session's server process exited \(it could not be started: spawn .*ENOENT\)/,
      );
      expect(terminations).toEqual(['child_failed']);
    } finally {
      await session.close();
      await client.close();
    }
  });
});

describe('R8D.10 closing a session', () => {
  it('R8D.10: close() stops the session process and everything under it, a running command included', async () => {
    const server = await e2e.scope();
    const project = await e2e.scope();
    const s = await isolated({ server, root: project.dir, childArgs: ['--inline-wait', '0'] });
    // A sleep no other test runs: its command line tells it among every process.
    const marker = `sleep ${String(300 + Math.random()).slice(0, 12)}`;
    const started = (await s.client.callTool({
      name: 'sandboxed_shell',
      arguments: { command: marker, execution_mode: 'AsyncResultPush', timeout_seconds: 600 },
    })) as CallToolResult;
    expect(structured<{ status: string }>(started).status).toBe('started');
    await waitFor(async () => (await processesMatching(marker)).length > 0, 'the command');
    const tree = await treeOf(pidOf(s));
    expect(tree.length).toBeGreaterThan(2);

    await s.session.close();
    expect(await live(tree)).toEqual([]);
    expect(await processesMatching(marker)).toEqual([]);
    expect((await processesMatching(project.dir)).filter((p) => p.state !== 'Z')).toEqual([]);
    expect(s.session.childPid).toBeUndefined();
  });
});
