// Shared harness of the shell-server tests. Every test gets its own sandbox scope under /var/tmp
// (outside the temp directory the sandbox always leaves writable), with the fixture tool
// definitions copied into <scope>/.ahma/tools, and XDG_CACHE_HOME, XDG_STATE_HOME and TMPDIR
// pointing into a private directory so the log file and Ahma's private state can be inspected.
// A server is either the BUILT binary (E2E.server: run the package build first) driven over stdio,
// or the same runtime and MCP connection in the test process (E2E.inProcess) over
// InMemoryTransport; both are driven with the SDK's real Client. Everything a test creates is
// removed by E2E.cleanup(); `it` below gives each test an E2E of its own, so that the tests of a
// file can run at once.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, readlink, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { BUILTIN_TOOL_NAMES } from '@ahma/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  LoggingMessageNotificationSchema,
  type CallToolResult,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type LoggingMessageNotification,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { test } from 'vitest';
import type { CommandResult } from '../../src/calls/results.js';
import type { ResponseMessage } from '../../src/jsonrpc/message-kind.js';
import type { Runtime } from '../../src/runtime/runtime.js';
import type { ServerOptions } from '../../src/runtime/settings.js';

export const PACKAGE_DIR = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(PACKAGE_DIR, 'bin', 'ahma-shell.js');
export const FIXTURES = join(PACKAGE_DIR, 'test', 'fixtures');

/**
 * The built-in tools, in the order tools/list must show them: core's list, the one the reserved
 * names derive from, so a built-in served without being reserved fails the tools/list tests.
 */
export const BUILT_INS = BUILTIN_TOOL_NAMES;
/** The fixture definitions' tools: by definition name, then leaves in declared order. */
export const FIXTURE_TOOLS = [
  'argv',
  'e2e_sync',
  'e2e_async',
  'fails',
  'files_show',
  'slow',
  'touch',
] as const;

/** The structured result of a finished command (SPEC §3), as the server declares it. */
export type { CommandResult };

export interface StartedResult {
  readonly operation_id: string;
  readonly status: 'started';
  readonly tool: string;
}

export interface Operations {
  readonly operations: (
    CommandResult | { operation_id: string; tool: string; status: 'running' }
  )[];
}

export interface Scope {
  /** Real path of the sandbox scope (under /var/tmp). */
  readonly dir: string;
  /** XDG_CACHE_HOME of the servers started on this scope. */
  readonly cacheHome: string;
  /** Where the server's daily log file goes. */
  readonly logDir: string;
  /** The root of the servers' private state ($XDG_STATE_HOME/ahma): output logs, caches. */
  readonly stateRoot: string;
  /** TMPDIR of the servers: the temp directory the sandbox leaves writable. */
  readonly tempDir: string;
  /** The environment servers and CLI runs get. */
  readonly env: Record<string, string>;
}

export interface ScopeOptions {
  /** Also copy the invalid definitions (test/fixtures/invalid-tools) into the tools directory. */
  readonly invalid?: boolean;
  /** Copy no tool definitions at all. */
  readonly noTools?: boolean;
}

export interface RunningServer {
  readonly client: Client;
  readonly transport: Transport;
  /** The server process's pid (the test process's own for an in-process server). */
  readonly pid: number;
  /** Everything the server wrote on stderr so far (an in-process server: its --log-to-stderr log). */
  stderr(): string;
  /** Progress the SDK delivered to calls made with `progress: true`, in arrival order. */
  readonly progress: Progress[];
  /** notifications/message received so far (completion pushes, R2.2). */
  readonly messages: LoggingMessageNotification['params'][];
  /** Every message the client received, in order, with its arrival time (performance.now()). */
  readonly received: { readonly at: number; readonly message: JSONRPCMessage }[];
  /**
   * Errors the SDK Client reported (e.g. "Received a progress notification for an unknown token").
   * E2E.cleanup() fails the test when there are any.
   */
  readonly clientErrors: Error[];
  call(
    name: string,
    args?: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<CallToolResult>;
  close(): Promise<void>;
}

export interface CallOptions {
  /** Ask for progress the SDK way (its progressToken is the request id): filled into `progress`. */
  readonly progress?: boolean;
  readonly request?: RequestOptions;
}

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment of the test process as strings only, plus overrides. */
export function childEnv(overrides: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    // AHMA_* settings of the developer's shell must not change what the tests see.
    if (value !== undefined && !key.startsWith('AHMA_')) env[key] = value;
  }
  return { ...env, ...overrides };
}

/** Owns the scopes, servers and child processes of one test file; cleanup() after each test. */
export class E2E {
  readonly #servers: RunningServer[] = [];
  readonly #children: ChildProcess[] = [];
  readonly #dirs: string[] = [];
  readonly #stops: (() => Promise<void>)[] = [];

  async scope(options: ScopeOptions = {}): Promise<Scope> {
    const dir = await realpath(await mkdtemp('/var/tmp/ahma-e2e-'));
    this.#dirs.push(dir);
    // XDG_CACHE_HOME (the log file), XDG_STATE_HOME (Ahma's private state) and TMPDIR all point
    // into one private directory, removed with the scope. The state sits beside the temp dir, not
    // in it: the server refuses a state root commands could write.
    const privateDir = await mkdtemp(join(tmpdir(), 'ahma-e2e-private-'));
    this.#dirs.push(privateDir);
    const cacheHome = join(privateDir, 'cache');
    const stateHome = join(privateDir, 'state');
    const tempDir = join(privateDir, 'tmp');
    await mkdir(tempDir);
    const toolsDir = join(dir, '.ahma', 'tools');
    await mkdir(toolsDir, { recursive: true });
    if (options.noTools !== true) await cp(join(FIXTURES, 'tools'), toolsDir, { recursive: true });
    if (options.invalid === true) {
      await cp(join(FIXTURES, 'invalid-tools'), toolsDir, { recursive: true });
    }
    return {
      dir,
      cacheHome,
      logDir: join(cacheHome, 'ahma', 'logs'),
      stateRoot: join(stateHome, 'ahma'),
      tempDir,
      env: childEnv({ XDG_CACHE_HOME: cacheHome, XDG_STATE_HOME: stateHome, TMPDIR: tempDir }),
    };
  }

  /** A directory outside every scope (and outside the temp directory), removed at cleanup. */
  async outsideDir(): Promise<string> {
    const dir = await realpath(await mkdtemp('/var/tmp/ahma-e2e-outside-'));
    this.#dirs.push(dir);
    return dir;
  }

  /**
   * Starts `ahma-shell --mode stdio --sandbox-scope <scope> …args` and connects the SDK Client;
   * `bin` runs another copy of the built server (one installed elsewhere).
   */
  async server(
    scope: Scope,
    args: readonly string[] = [],
    bin: string = BIN,
  ): Promise<RunningServer> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, '--mode', 'stdio', '--sandbox-scope', scope.dir, ...args],
      env: scope.env,
      cwd: scope.dir,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    return this.#connect(
      transport,
      () => transport.pid,
      () => stderr,
    );
  }

  /**
   * The same server in this process: a runtime and an MCP connection made from the command line
   * `--mode stdio --sandbox-scope <scope> …args`, with the scope's environment and directory,
   * connected to the SDK Client over InMemoryTransport. The log goes where the binary's would
   * (the scope's log file), or with --log-to-stderr to `stderr()` as the binary prints it.
   */
  async inProcess(scope: Scope, args: readonly string[] = []): Promise<RunningServer> {
    const { createMcpServer } = await import('../../src/protocol/server.js');
    const { runtime, stderr } = await madeRuntime(scope, ['--mode', 'stdio', ...args]);
    const connection = createMcpServer(runtime);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await connection.server.connect(serverSide);
    return this.#connect(
      clientSide,
      () => process.pid,
      stderr,
      async () => {
        await connection.close();
        await runtime.close();
      },
    );
  }

  /**
   * How a server started with `--mode stdio --sandbox-scope <scope> …args` answers initialize, as
   * an isolated session asks it (IsolatedSessionOptions.answerInitialize): a runtime made in this
   * process from that command line, closed at cleanup.
   */
  async initializeAnswerer(
    scope: Scope,
    args: readonly string[] = [],
  ): Promise<(request: JSONRPCRequest) => Promise<ResponseMessage>> {
    const { initializeAnswer } = await import('../../src/protocol/initialize-answer.js');
    const { runtime } = await this.runtime(scope, ['--mode', 'stdio', ...args]);
    return (request) => initializeAnswer(runtime, request);
  }

  /**
   * A runtime made in this process from the command line `args` (its mode included), with the
   * scope's environment and directory, and the options it was made from; closed at cleanup.
   */
  async runtime(scope: Scope, args: readonly string[]): Promise<MadeRuntime> {
    const made = await madeRuntime(scope, args);
    this.onCleanup(() => made.runtime.close());
    return made;
  }

  /**
   * Connects the SDK Client over `transport` to a server started elsewhere (an HTTP server in this
   * process: `pid` is the test process's); closed at cleanup like the others.
   */
  connect(
    transport: Transport,
    server: { pid: number; stderr: () => string; stop?: () => Promise<void> },
  ): Promise<RunningServer> {
    return this.#connect(transport, () => server.pid, server.stderr, server.stop);
  }

  /** `stop` runs at cleanup, after the clients closed (a server or runtime the test started). */
  onCleanup(stop: () => Promise<void>): void {
    this.#stops.push(stop);
  }

  async #connect(
    transport: Transport,
    pidOf: () => number | null,
    stderr: () => string,
    stop: () => Promise<void> = () => Promise.resolve(),
  ): Promise<RunningServer> {
    const client = new Client({ name: 'ahma-e2e', version: '1.0.0' });
    const clientErrors: Error[] = [];
    let closing = false;
    // What the client reports once the test closed it (an HTTP stream it aborted) is not the
    // server's doing.
    client.onerror = (error) => {
      if (!closing) clientErrors.push(error);
    };
    await client.connect(transport);
    const pid = pidOf();
    if (pid === null) throw new Error('the server has no pid');
    // Every incoming message with its arrival time, before the Client handles it.
    const received: RunningServer['received'] = [];
    const handle = transport.onmessage;
    transport.onmessage = (message, extra) => {
      received.push({ at: performance.now(), message });
      handle?.(message, extra);
    };
    const messages: LoggingMessageNotification['params'][] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      messages.push(notification.params);
    });
    const progress: Progress[] = [];
    let closed: Promise<void> | undefined;
    const server: RunningServer = {
      client,
      transport,
      pid,
      stderr,
      progress,
      messages,
      received,
      clientErrors,
      call: async (name, callArgs = {}, options = {}) =>
        (await client.callTool({ name, arguments: callArgs }, undefined, {
          ...options.request,
          ...(options.progress === true ? { onprogress: (p: Progress) => progress.push(p) } : {}),
        })) as CallToolResult,
      close: () => {
        closing = true;
        return (closed ??= client.close().then(stop));
      },
    };
    this.#servers.push(server);
    return server;
  }

  /** Runs the binary to its end (stdin is /dev/null) and collects its output. */
  run(
    args: readonly string[],
    options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<CliResult> {
    return this.runCommand(process.execPath, [BIN, ...args], options);
  }

  /**
   * Runs ahma-shell's command line in this process (cli/run.ts, what the binary runs), with its
   * own arguments, environment and directory; stdin is no terminal. For everything but the
   * binary's own smoke tests: a process start costs a second of CPU on a busy machine.
   */
  async runInProcess(
    args: readonly string[],
    options: { cwd?: string; env?: Record<string, string> } = {},
  ): Promise<CliResult> {
    let stdout = '';
    let stderr = '';
    // Loaded when first used: most files that import the harness drive the binary instead, and
    // the command line's module graph is the whole server.
    const { runAhmaShell } = await import('../../src/cli/run.js');
    const code = await runAhmaShell(args, options.env ?? childEnv(), options.cwd ?? PACKAGE_DIR, {
      stdout: (text) => void (stdout += text),
      stderr: (text) => void (stderr += text),
      stdinIsTerminal: false,
      stderrIsTerminal: false,
    });
    return { code, signal: null, stdout, stderr };
  }

  runCommand(
    file: string,
    args: readonly string[],
    options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<CliResult> {
    const child = spawn(file, args, {
      cwd: options.cwd ?? PACKAGE_DIR,
      env: options.env ?? childEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    // Generous: the tests of a file run at once, and a busy machine may take seconds per start.
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 45_000);
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal, stdout, stderr });
      });
    });
  }

  /** A child process the test drives itself; killed at cleanup if still running. */
  track(child: ChildProcess): ChildProcess {
    this.#children.push(child);
    return child;
  }

  async cleanup(): Promise<void> {
    const servers = this.#servers.splice(0);
    await Promise.all(servers.map((server) => server.close().catch(() => undefined)));
    for (const stop of this.#stops.splice(0).reverse()) await stop().catch(() => undefined);
    const clientErrors = servers.flatMap((server) => server.clientErrors);
    for (const child of this.#children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    const dirs = this.#dirs.splice(0);
    // A killed HTTP server's session processes (a process group each) end by themselves once their
    // stdin closes, and may still be writing their private state meanwhile: tried again then.
    await Promise.all(
      dirs.map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 })),
    );
    // SPEC §3: nothing the server sends may make the SDK Client report an error (a progress
    // notification after the call's response is one: "unknown token").
    if (clientErrors.length > 0) {
      throw new Error(
        `the SDK Client reported errors:\n${clientErrors.map((error) => error.message).join('\n')}`,
      );
    }
  }
}

/**
 * vitest's `it` with an E2E of the test's own, `it('…', async ({ e2e }) => …)`, cleaned up when the
 * test ends (a cleanup error fails that test). Tests that only wait can then run at once
 * (`describe.concurrent`): a file-wide `afterEach(() => e2e.cleanup())` would end the servers of
 * the tests still running. Parameterised tests use `it.for`, whose callback gets the context too.
 */
export const it = test.extend<{ e2e: E2E }>({
  // vitest reads a fixture's dependencies from its first parameter, which must be a pattern.
  // eslint-disable-next-line no-empty-pattern
  e2e: async ({}, use) => {
    const e2e = new E2E();
    try {
      await use(e2e);
    } finally {
      await e2e.cleanup();
    }
  },
});

/** What E2E.runtime makes: the runtime, and the options, logger and stderr it was made with. */
export type MadeRuntime = Awaited<ReturnType<typeof serverSetup>> & {
  readonly runtime: Runtime;
};

/**
 * A runtime made from the command line `args` on `scope`, not closed by anyone but the caller.
 * Its module is loaded when first used: a file that only drives the binary does not compile it.
 */
async function madeRuntime(scope: Scope, args: readonly string[]): Promise<MadeRuntime> {
  const { createRuntime } = await import('../../src/runtime/runtime.js');
  const setup = await serverSetup(scope, args);
  const { options, logger } = setup;
  return {
    ...setup,
    runtime: await createRuntime({ options, env: scope.env, cwd: scope.dir, logger }),
  };
}

/**
 * What an in-process server is made from: the options of `args` (with `--sandbox-scope <scope>`)
 * and the log the binary would write: the scope's log file, or with --log-to-stderr its
 * human-readable lines (without colours), kept for `stderr()`.
 */
export async function serverSetup(
  scope: Scope,
  args: readonly string[],
): Promise<{
  options: ServerOptions;
  logger: Logger;
  stderr: () => string;
  /** Writes to what `stderr()` returns, as the binary would write to its stderr. */
  writeStderr: (text: string) => void;
}> {
  const [{ parseCommandLine }, { createLogger }, { pino }, { PinoPretty }] = await Promise.all([
    import('../../src/cli/options.js'),
    import('../../src/cli/logging.js'),
    import('pino'),
    import('pino-pretty'),
  ]);
  const parsed = parseCommandLine(['--sandbox-scope', scope.dir, ...args], scope.env);
  if (parsed.kind !== 'run') throw new Error(`not a server command line: ${args.join(' ')}`);
  const { options } = parsed;
  let stderr = '';
  const logger = options.logToStderr
    ? pino(
        { level: options.debug ? 'debug' : 'info' },
        PinoPretty({
          colorize: false,
          destination: new Writable({
            write(chunk: Buffer, _encoding, done) {
              stderr += chunk.toString('utf8');
              done();
            },
          }),
        }),
      )
    : await createLogger({ logToStderr: false, debug: options.debug, env: scope.env });
  return {
    options,
    logger,
    stderr: () => stderr,
    writeStderr: (text) => (stderr += text),
  };
}

/** The text parts of a tool result, joined. */
export function textOf(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

export function structured<T>(result: CallToolResult): T {
  if (result.structuredContent === undefined) {
    throw new Error(`no structuredContent in ${JSON.stringify(result)}`);
  }
  return result.structuredContent as T;
}

/** Polls `probe` until it returns something other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${String(timeoutMs)} ms waiting for ${what}`);
    await sleep(25);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A marker unlikely to appear in any other process's command line. */
export function uniqueMarker(): string {
  return `ahma-e2e-${randomBytes(6).toString('hex')}`;
}

export interface ProcessInfo {
  readonly pid: number;
  readonly ppid: number;
  /** One-letter state from /proc/<pid>/stat (R running, S sleeping, Z zombie, …). */
  readonly state: string;
  readonly pgrp: number;
  readonly session: number;
  /** argv joined with spaces (empty for zombies and kernel threads). */
  readonly cmdline: string;
}

/** The directory `pid` runs in; undefined when it is gone (or cannot be read). */
export async function cwdOf(pid: number): Promise<string | undefined> {
  return readlink(`/proc/${String(pid)}/cwd`).catch(() => undefined);
}

/**
 * The isolated sessions' processes below `serverPid` that run on `scope`: by their directory, as
 * a process started ahead (a spare) learns its scope on stdin, not on its command line.
 */
export async function sessionProcessesOn(serverPid: number, scope: string): Promise<ProcessInfo[]> {
  const below = (await descendantsOf(serverPid)).filter((info) =>
    info.cmdline.includes('--mode stdio'),
  );
  const cwds = await Promise.all(below.map((info) => cwdOf(info.pid)));
  return below.filter((_, index) => cwds[index] === scope);
}

/** Every process visible in /proc (those that vanish while being read are left out). */
export async function processes(): Promise<ProcessInfo[]> {
  const entries = await readdir('/proc');
  const found = await Promise.all(
    entries.filter((entry) => /^\d+$/.test(entry)).map((entry) => processInfo(Number(entry))),
  );
  return found.filter((info) => info !== undefined);
}

export async function processInfo(pid: number): Promise<ProcessInfo | undefined> {
  try {
    const [stat, cmdline] = await Promise.all([
      readFile(`/proc/${String(pid)}/stat`, 'utf8'),
      readFile(`/proc/${String(pid)}/cmdline`, 'utf8'),
    ]);
    // "pid (comm) state ppid …": comm may contain spaces and parentheses; split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return {
      pid,
      ppid: Number(fields[1]),
      state: fields[0] ?? '?',
      pgrp: Number(fields[2]),
      session: Number(fields[3]),
      cmdline: cmdline.split('\0').join(' ').trim(),
    };
  } catch {
    return undefined;
  }
}

/** Processes whose command line contains `marker`. */
export async function processesMatching(marker: string): Promise<ProcessInfo[]> {
  return (await processes()).filter((info) => info.cmdline.includes(marker));
}

/** Every descendant of `pid` (children, grandchildren, …). */
export async function descendantsOf(pid: number): Promise<ProcessInfo[]> {
  const all = await processes();
  const result: ProcessInfo[] = [];
  let frontier = [pid];
  while (frontier.length > 0) {
    const children = all.filter((info) => frontier.includes(info.ppid));
    result.push(...children);
    frontier = children.map((info) => info.pid);
  }
  return result;
}

/** True while /proc/<pid> exists (a zombie still counts). */
export function exists(pid: number): boolean {
  return existsSync(`/proc/${String(pid)}`);
}

/** The log files of a scope's servers, and their JSON lines. */
export async function readLog(
  scope: Scope,
): Promise<{ files: string[]; text: string; lines: Record<string, unknown>[] }> {
  const files = (await readdir(scope.logDir).catch(() => [] as string[]))
    .filter((name) => name.endsWith('.log'))
    .sort();
  const text = (
    await Promise.all(files.map((name) => readFile(join(scope.logDir, name), 'utf8')))
  ).join('');
  const lines = text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { files, text, lines };
}

/** The process of a stdio server the test drives with raw JSON-RPC lines. */
/** How long a test waits for a started binary to answer its first request. */
const START_TIMEOUT_MS = 45_000;

export class RawSession {
  readonly child: ChildProcess;
  readonly stdoutLines: string[] = [];
  stderr = '';
  readonly #messages: Record<string, unknown>[] = [];
  #buffer = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(e2e: E2E, scope: Scope, args: readonly string[]) {
    this.child = e2e.track(
      spawn(process.execPath, [BIN, '--mode', 'stdio', '--sandbox-scope', scope.dir, ...args], {
        cwd: scope.dir,
        env: scope.env,
        stdio: ['pipe', 'pipe', 'pipe'],
      }),
    );
    this.child.stdout?.on('data', (chunk: Buffer) => {
      this.#buffer += chunk.toString('utf8');
      let newline: number;
      while ((newline = this.#buffer.indexOf('\n')) !== -1) {
        const line = this.#buffer.slice(0, newline);
        this.#buffer = this.#buffer.slice(newline + 1);
        this.stdoutLines.push(line);
        try {
          this.#messages.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          // Kept in stdoutLines; the test reports it.
        }
      }
    });
    this.child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString('utf8')));
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => resolve({ code, signal }));
    });
  }

  /** Whatever stdout held after its last newline (must be empty at the end). */
  get partialLine(): string {
    return this.#buffer;
  }

  send(message: Record<string, unknown>): void {
    this.child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  }

  async request(
    id: number,
    method: string,
    params: Record<string, unknown> = {},
    timeoutMs?: number,
  ): Promise<Record<string, unknown>> {
    this.send({ id, method, params });
    return waitFor(
      () => this.#messages.find((message) => message['id'] === id),
      `the response to request ${String(id)}`,
      timeoutMs,
    );
  }

  async initialize(): Promise<void> {
    // The answer waits for the process to start: generous, as a busy machine (the suite's files
    // run at once on two cores) may take seconds for that.
    await this.request(
      0,
      'initialize',
      {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'ahma-e2e-raw', version: '1.0.0' },
      },
      START_TIMEOUT_MS,
    );
    this.send({ method: 'notifications/initialized' });
  }

  /** Ends stdin (the client goes away) and waits for the server to exit. */
  async end(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.child.stdin?.end();
    return this.exited;
  }
}

/** The operation id of a completion push (R2.2: notifications/message from logger "ahma"). */
export function pushedId(message: LoggingMessageNotification['params']): string | undefined {
  if (message.logger !== 'ahma') return undefined;
  const data = message.data as { operation_id?: unknown } | undefined;
  return typeof data?.operation_id === 'string' ? data.operation_id : undefined;
}
