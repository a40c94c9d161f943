// The process of one isolated session (R8D.3): `ahma-shell --mode stdio --sandbox-scope <scope>`
// (or a spare, given its scope later: spare.ts) started in a session and process group of its
// own, without the HTTP server's secrets in its environment (R7.9), its stdout split into lines,
// the end of its stderr kept to explain an exit, and a stop that leaves nothing behind. It knows
// no MCP: the session's process slot (isolation/process-slot.ts) reads and writes the lines.
//
// Stopping: stdin is closed and SIGTERM sent, so the server closes its runtime (cancels running
// commands, stops warm shells, removes its private state) and exits; after `graceMs` the server is
// stopped (SIGSTOP: it forks no more) and its tree SIGKILLed from /proc (core's killTree, while the
// server still holds the tree together), then the process group. stop() resolves once the server has exited and every process
// that was below it when the stop began is gone (bounded: a process in uninterruptible sleep is
// not waited for forever). A server that dies by itself (a crash, SIGKILL) takes its commands
// along: the sandbox helper is started with PR_SET_PDEATHSIG and ends the trees it supervises.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { descendantsOf, isLive, killTree, procStat, type Environment } from '@ahma/core';
import { LineFramer } from '../jsonrpc/line-framer.js';
import { SCOPE_FROM_STDIN, scopeLine } from './spare-scope.js';

/**
 * The program an isolated session runs; `--sandbox-scope <scope>` is appended to `args` (a spare's
 * `--scope-from-stdin`, spare-scope.ts).
 */
export interface ChildCommand {
  readonly file: string;
  readonly args: readonly string[];
  /** Variables the process must not inherit: its command line says what they would. */
  readonly unsetEnv?: readonly string[];
}

export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the program could not be started at all (ENOENT, EACCES). */
  readonly error?: Error;
}

/** What the session hears of its process. */
export interface ChildHandlers {
  /** One line of stdout, without its newline. */
  readonly onLine: (line: string) => void;
  /** A line of stderr (the server's --log-to-stderr log, or why it refused to start). */
  readonly onStderrLine: (line: string) => void;
  /** Called once, after the last line of stdout. */
  readonly onExit: (exit: ChildExit) => void;
}

export interface SessionChildOptions extends ChildHandlers {
  readonly command: ChildCommand;
  /**
   * The process's scope; undefined for a spare (isolation/spare-scope.ts), which waits for the
   * one assign() gives it.
   */
  readonly scope: string | undefined;
  readonly env: Environment;
}

/**
 * R7.9: the HTTP server's own secrets, never given to a session's process: it serves stdio and
 * needs neither, and whatever is in its environment its sandboxed commands could try to reach.
 */
export const HTTP_SECRET_VARIABLES: ReadonlySet<string> = new Set([
  'AHMA_HTTP_TOKEN',
  'AHMA_HTTP_TOKEN_FILE',
]);

/** The most one line of stdout may hold: far above the 10 MiB a client may send the server. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;
/** How much of the end of stderr is kept to explain an exit. */
const STDERR_TAIL_CHARS = 4096;
/** How long stop() waits for the processes that were below the server to go. */
const TREE_WAIT_MS = 5000;

export class SessionChild {
  readonly #child: ChildProcessWithoutNullStreams;
  #handlers: ChildHandlers;
  #scope: string | undefined;
  #exit: ChildExit | undefined;
  readonly #exited: Promise<ChildExit>;
  #stderrTail = '';
  #stopping: Promise<void> | undefined;

  constructor(options: SessionChildOptions) {
    this.#handlers = options;
    this.#scope = options.scope;
    const unset = new Set(options.command.unsetEnv);
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(options.env))
      if (value !== undefined && !HTTP_SECRET_VARIABLES.has(key) && !unset.has(key))
        env[key] = value;
    const scopeWords =
      options.scope === undefined ? [SCOPE_FROM_STDIN] : ['--sandbox-scope', options.scope];
    this.#child = spawn(
      options.command.file,
      [...options.command.args, ...scopeWords],
      // detached: its own session and process group, so a signal meant for it reaches no other.
      // A spare starts at / and moves into its scope when it is given one.
      { cwd: options.scope ?? '/', env, stdio: ['pipe', 'pipe', 'pipe'], detached: true },
    );
    const child = this.#child;
    const framer = new LineFramer(MAX_LINE_BYTES);
    child.stdout.on('data', (chunk: Buffer) => {
      for (const frame of framer.push(chunk)) {
        // An oversized line cannot be a message the session could forward whole; it is dropped.
        if (frame.kind === 'line') this.#handlers.onLine(frame.bytes.toString('utf8'));
        else
          this.#handlers.onStderrLine(`(a ${String(frame.size)}-byte line on stdout was dropped)`);
      }
    });
    let stderrLine = '';
    child.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      this.#stderrTail = (this.#stderrTail + text).slice(-STDERR_TAIL_CHARS);
      stderrLine += text;
      const lines = stderrLine.split('\n');
      stderrLine = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') this.#handlers.onStderrLine(line);
    });
    // Writing to a server that has just died must not throw in the session's process.
    child.stdin.on('error', () => undefined);
    this.#exited = new Promise((resolve) => {
      const done = (exit: ChildExit) => {
        if (this.#exit !== undefined) return;
        this.#exit = exit;
        const last = framer.end();
        if (last?.kind === 'line') this.#handlers.onLine(last.bytes.toString('utf8'));
        if (stderrLine.trim() !== '') this.#handlers.onStderrLine(stderrLine);
        this.#handlers.onExit(exit);
        resolve(exit);
      };
      child.once('error', (error) => {
        // No process was made (or it cannot be signalled): nothing more will come.
        if (child.pid === undefined) done({ code: null, signal: null, error });
      });
      // 'close': after the last of stdout, so every message it sent is read before the exit.
      child.once('close', (code, signal) => done({ code, signal }));
    });
  }

  /**
   * Gives a spare its scope, and the session that took it its handlers; false when the process is
   * gone (or already has a scope).
   */
  assign(scope: string, handlers: ChildHandlers): boolean {
    if (this.#scope !== undefined || this.#exit !== undefined) return false;
    this.#scope = scope;
    this.#handlers = handlers;
    return this.write(scopeLine(scope));
  }

  /** Undefined when the program could not be started. */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /**
   * Why the server stopped, in its own words: the last `ahma-shell: …` line of its stderr (the
   * first line of a refusal to start), else its last line; undefined when it said nothing.
   */
  lastWords(): string | undefined {
    const lines = this.#stderrTail
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '');
    const said = lines.filter((line) => line.startsWith('ahma-shell: ')).pop() ?? lines.pop();
    return said === undefined || said.length <= 300 ? said : `${said.slice(0, 300)}…`;
  }

  /** Writes one line (a newline is added); false when the server is gone. */
  write(line: string): boolean {
    if (this.#exit !== undefined || !this.#child.stdin.writable) return false;
    this.#child.stdin.write(`${line}\n`);
    return true;
  }

  /** Ends the server and everything below it (see the top of this file). Idempotent. */
  stop(graceMs: number): Promise<void> {
    return (this.#stopping ??= this.#stop(graceMs));
  }

  async #stop(graceMs: number): Promise<void> {
    const pid = this.#child.pid;
    if (pid === undefined || this.#exit !== undefined) {
      await this.#exited;
      return;
    }
    // Each with its start time: a pid reused by a later process is not the one that was below.
    const below = descendantsOf(pid).flatMap((id) => {
      const start = procStat(id)?.start;
      return start === undefined ? [] : [{ pid: id, start }];
    });
    this.#child.stdin.end();
    signal(pid, 'SIGTERM');
    // The grace's timer is cleared once the process exits: left running, it would hold the
    // server's own exit (a ^C) for the whole grace.
    let grace: NodeJS.Timeout | undefined;
    const graceful = await Promise.race([
      this.#exited.then(() => true),
      new Promise<boolean>((resolve) => {
        grace = setTimeout(() => resolve(false), graceMs);
      }),
    ]);
    clearTimeout(grace);
    if (!graceful) {
      signal(pid, 'SIGSTOP'); // forks no more while its tree is killed
      await killTree(pid);
    }
    await this.#exited;
    signal(-pid, 'SIGKILL'); // anything left in its process group
    const deadline = Date.now() + TREE_WAIT_MS;
    let left = below.filter(alive);
    while (left.length > 0 && Date.now() < deadline) {
      await delay(20);
      left = left.filter(alive);
    }
    // What was below it and still lives (its helpers die with it, PR_SET_PDEATHSIG): killed now.
    for (const survivor of left) signal(survivor.pid, 'SIGKILL');
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // gone already
  }
}

/** The same process, neither gone nor a zombie (dead; its parent has yet to reap it). */
const alive = ({ pid, start }: { pid: number; start: string }): boolean => {
  const stat = procStat(pid);
  return stat !== undefined && stat.start === start && isLive(stat);
};

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
