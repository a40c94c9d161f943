// Runs one command in the sandbox and returns one result shape for every outcome (SPEC §3).
// The command runs in its own process group under the sandbox helper, which supervises the whole
// process tree; a timeout or cancel terminates that tree (SIGTERM, then SIGKILL after a grace).
import { spawn, type ChildProcess } from 'node:child_process';
import { homedir } from 'node:os';
import { relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { AhmaError } from '../errors.js';
import { askable, grantRules, type EgressGate } from '../network/egress-gate.js';
import type { HandoffWatch } from '../sandbox/handoff-watch.js';
import { explainRefusals, type Explained } from '../sandbox/refusal-hints.js';
import { narrowest, type NetworkMode } from '../sandbox/network.js';
import type { OwnConfinement, Sandbox } from '../sandbox/sandbox.js';
import type { WriteGrants } from '../sandbox/write-grants.js';
import { tempDirectory, type CommandEnvironment } from './environment.js';
import {
  Conversation,
  DEFAULT_INTERACTIVE_IDLE_MS,
  type InteractiveRequest,
} from './interactive.js';
import type {
  Command,
  ExecutionResult,
  ExecutionStatus,
  HandoffWrite,
  NetworkRefusal,
} from './execution-types.js';
import {
  ELISION_MARKER_LINE,
  OutputCollector,
  type CollectedOutput,
  type OutputLimits,
} from './output.js';
import type { LiveOutput } from './output-reader.js';
import { runningChild, type ExitStatus, type RunningCommand } from './running-command.js';
import type { ShellPool } from './shell-pool.js';
import { timerDelay } from './timer.js';
import { withDefaults, type Timings } from './timings.js';

export interface ExecutionRequest {
  readonly command: Command;
  /** Real path of the working directory, inside the scope. */
  readonly cwd: string;
  readonly timeoutMs?: number | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Base name of the full-output log file, if the output is truncated (an operation id). */
  readonly logName: string;
  /**
   * Sees the merged output as it arrives, in order, besides the bounded result (a livelog tool's
   * live view). Called synchronously with each piece; it must not keep more than it bounds itself.
   */
  readonly onOutput?: ((chunk: Buffer) => void) | undefined;
  /**
   * R7.17: who runs it (the tool, and the MCP connection that called it), for the egress proxy's
   * decisions and the person's session grants. Default: tool `ahma`, no connection.
   */
  readonly caller?: { readonly tool: string; readonly owner?: string | undefined } | undefined;
  /**
   * R7.15, R7.16: a tool file's own network mode; only one narrower than the server's applies
   * (none < proxy < host), and such a command is spawned on its own, not in a warm shell.
   */
  readonly network?: NetworkMode | undefined;
  /** R15.2: the call's output budget in tokens (`max_output_tokens`); default the limits'. */
  readonly maxOutputTokens?: number | undefined;
  /**
   * R15.4: the command is talked to while it runs: its stdin stays open (a pipe; with `pty`, a
   * pseudo-terminal), `conversation()` reaches it by log name, and it is ended after `idleMs`
   * without input or output. Spawned on its own, never in a warm shell.
   */
  readonly interactive?: InteractiveRequest | undefined;
  /**
   * Workspace lanes, `read_only`: the command may not write inside the scope (the sandbox refuses
   * it), and git takes no optional locks (GIT_OPTIONAL_LOCKS=0: `git status` beside a writer).
   * Spawned on its own, not in a warm shell (the pool's shells may write the scope).
   */
  readonly readOnly?: boolean | undefined;
  /**
   * Variables set for this command on top of the server's command environment (a livelog tool's
   * `env`): values, never interpreted by a shell. The egress proxy's variables still win.
   */
  readonly env?: Readonly<Record<string, string>> | undefined;
}

export interface ExecutorOptions {
  readonly sandbox: Sandbox;
  readonly env: CommandEnvironment;
  readonly limits: OutputLimits;
  /** How long each step of stopping a command waits (timings.ts; default DEFAULT_TIMINGS). */
  readonly timings?: Partial<Timings> | undefined;
  /** Warm shells; without one every command is spawned directly. */
  readonly pool?: ShellPool | undefined;
  /** R7.11: the hand-off files, snapshotted around each command; changes are reported. */
  readonly handoff?: HandoffWatch | undefined;
  /** Why a refused path is a protected hand-off file (R7.11), for the refusal hints (R7.13). */
  readonly explainHandoff?: ((path: string) => string | undefined) | undefined;
  /**
   * R7.16: the egress proxy's gate (started on first use): a command in `proxy` mode gets a pass
   * of its own through it.
   */
  readonly egress?: (() => Promise<EgressGate>) | undefined;
  /** R7.18: writes a person allowed outside the writable paths, per session. */
  readonly writeGrants?: WriteGrants | undefined;
}

/**
 * Sees every command of the executor as it runs (the operations page's live view): when it
 * starts, each piece of its merged output in order, and its end. Called synchronously on the
 * output's path: an observer keeps only what it bounds itself, and its errors are ignored.
 */
export interface CommandObserver {
  started(logName: string, command: Command, cwd: string): void;
  output(logName: string, chunk: Buffer): void;
  ended(logName: string): void;
}

/**
 * The variables a command gets on top of the server's command environment, the same in a warm
 * shell and a spawned helper: a livelog tool's `env`, GIT_OPTIONAL_LOCKS=0 for a read_only call,
 * and the egress proxy's pass, which wins. Undefined when there are none.
 */
function commandEnv(
  request: ExecutionRequest,
  passEnv: CommandEnvironment | undefined,
): CommandEnvironment | undefined {
  const readOnly = request.readOnly === true ? { GIT_OPTIONAL_LOCKS: '0' } : undefined;
  if (request.env === undefined && readOnly === undefined) return passEnv;
  return { ...request.env, ...readOnly, ...passEnv };
}
/**
 * The argv that really runs for a command, spawned or in a warm shell (the audit records it). A
 * script runs in bash without startup files, so no user rc changes behaviour.
 */
export function commandArgv(command: Command): readonly string[] {
  return command.kind === 'argv'
    ? command.argv
    : ['bash', '--noprofile', '--norc', '-c', command.script];
}

export class Executor {
  readonly #options: ExecutorOptions;
  readonly #timings: Timings;
  /** R15.3: the output collectors of the commands running now, by log name (liveOutput). */
  readonly #live = new Map<string, OutputCollector>();
  /** R15.4: the interactive commands running now, by log name. */
  readonly #conversations = new Map<string, Conversation>();
  readonly #observers = new Set<CommandObserver>();

  constructor(options: ExecutorOptions) {
    this.#options = options;
    this.#timings = withDefaults(options.timings);
  }

  get sandbox(): Sandbox {
    return this.#options.sandbox;
  }

  /** The environment every command gets. */
  get env(): CommandEnvironment {
    return this.#options.env;
  }

  /** How much output a result keeps, and where full logs go. */
  get limits(): OutputLimits {
    return this.#options.limits;
  }

  /**
   * R15.3: what can be read now of the output of the command running under `logName` (an
   * operation id; `<id>-stepN` for a sequence's step; an operation id of a running sequence finds
   * its running step): the log holding all of it so far once there is one, and the bytes kept in
   * memory. Undefined when no such command runs.
   */
  liveOutput(logName: string): LiveOutput | undefined {
    let name = logName;
    let collector = this.#live.get(name);
    if (collector === undefined) {
      const prefix = `${logName}-step`;
      for (const [key, value] of this.#live) {
        if (key.startsWith(prefix) && /^\d+$/.test(key.slice(prefix.length))) {
          name = key;
          collector = value;
          break;
        }
      }
    }
    if (collector === undefined) return undefined;
    return { logName: name, logPath: collector.logPath, ...collector.kept() };
  }

  /** Shows every command from now on to `observer`, until the returned function is called. */
  observe(observer: CommandObserver): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  /** Tells every observer; an observer's bug must not touch the command or its supervision. */
  #tell(notify: (observer: CommandObserver) => void): void {
    for (const observer of this.#observers) {
      try {
        notify(observer);
      } catch {
        // ignored (see CommandObserver)
      }
    }
  }

  /** R15.4: the conversation with an interactive command running now, by its log name. */
  conversation(logName: string): Conversation | undefined {
    return this.#conversations.get(logName);
  }

  /** Runs the command to its end; never rejects for the command's own failure. */
  async run(request: ExecutionRequest): Promise<ExecutionResult> {
    assertNoNul(request.command);
    if (request.interactive?.pty !== undefined && this.#options.sandbox.mechanism === 'seatbelt') {
      throw new AhmaError(
        'ARGUMENTS_INVALID',
        'pty is not available on macOS yet (the helper that opens the terminal is Linux only); run it with stdin "open" instead',
      );
    }
    const started = performance.now();
    if (request.signal?.aborted === true) return cancelledBeforeStart(started);
    // Before the pool is asked: a hand-off change made outside renews it (and its mounts).
    const watch = this.#options.handoff;
    const before = watch?.before();
    const { sandbox } = this.#options;
    // Unconfined commands (--no-sandbox) are held to no mode at all.
    const network =
      sandbox.mechanism === 'none' ? sandbox.network : narrowest(sandbox.network, request.network);
    // R7.16: the command's own proxy URL (its token dies with it), also in a warm shell.
    const gate = network === 'proxy' ? await this.#options.egress?.() : undefined;
    const pass = gate?.open({
      tool: request.caller?.tool ?? 'ahma',
      operationId: request.logName,
      owner: request.caller?.owner,
    });
    // R7.18: paths a person allowed this command's session to write.
    const writable =
      sandbox.mechanism === 'none'
        ? []
        : (this.#options.writeGrants?.forCommand(request.caller?.owner) ?? []);
    let result: ExecutionResult;
    let refusals: NetworkRefusal[];
    try {
      const extraEnv = commandEnv(request, pass?.env);
      // A confinement of its own needs a helper of its own (the pool's carries the server's).
      const readOnlyScope = request.readOnly === true && sandbox.mechanism !== 'none';
      const own =
        network !== sandbox.network ||
        writable.length > 0 ||
        request.interactive !== undefined ||
        readOnlyScope
          ? {
              network,
              proxyPort: gate?.port,
              writable,
              pty: request.interactive?.pty,
              readOnlyScope,
            }
          : undefined;
      const running =
        (own === undefined
          ? this.#options.pool?.take(request.command, request.cwd, extraEnv)
          : undefined) ??
        runningChild(this.#spawn(request, extraEnv, own), this.#timings.pipeCloseMs);
      result = await this.#supervise(running, request, started);
    } finally {
      refusals = pass?.end() ?? [];
      this.#conversations.get(request.logName)?.end();
      this.#conversations.delete(request.logName);
    }
    const writes = before === undefined ? [] : (watch?.after(before) ?? []);
    if (writes.length > 0) {
      result = {
        ...result,
        output: result.output + handoffNote(writes, this.#options.sandbox.scope),
        handoffWrites: writes,
      };
    }
    if (refusals.length > 0) {
      result = {
        ...result,
        output: result.output + networkNote(refusals),
        networkRefusals: refusals,
      };
    }
    return result;
  }

  #spawn(
    request: ExecutionRequest,
    passEnv: CommandEnvironment | undefined,
    own: OwnConfinement | undefined,
  ): ChildProcess {
    const { file, args } = this.#options.sandbox.wrap(commandArgv(request.command), own);
    const pty = request.interactive?.pty;
    // R15.4: a terminal says what it is and how big.
    const terminal =
      pty === undefined
        ? {}
        : { TERM: 'xterm-256color', COLUMNS: String(pty.cols), LINES: String(pty.rows) };
    const child = spawn(file, args, {
      cwd: request.cwd,
      env: {
        ...this.#options.env,
        ...passEnv,
        ...terminal,
      },
      // stdin is /dev/null but for an interactive command; the helper merges the command's stderr
      // into stdout, and its own messages arrive on stderr.
      stdio: [request.interactive === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      // A new session and process group: no controlling terminal (a password prompt fails at
      // once) and one group to signal.
      detached: true,
    });
    if (request.interactive !== undefined && child.stdin !== null) {
      this.#conversations.set(request.logName, new Conversation(child.stdin));
    }
    return child;
  }

  async #supervise(
    running: RunningCommand,
    request: ExecutionRequest,
    started: number,
  ): Promise<ExecutionResult> {
    const { graceMs, backstopSlackMs, watchdogMs, idleCheckMs } = this.#timings;
    const collector = new OutputCollector(
      this.#options.limits,
      request.logName,
      request.maxOutputTokens,
    );
    this.#live.set(request.logName, collector);
    this.#tell((observer) => observer.started(request.logName, request.command, request.cwd));
    // Why the server stopped the command, if it did; a timeout wins over a cancel.
    let stoppedBy: 'timed_out' | 'cancelled' | undefined;
    let backstop: NodeJS.Timeout | undefined;
    let watchdog: NodeJS.Timeout | undefined;

    const terminate = () => {
      running.terminate('SIGTERM');
      // The helper escalates to SIGKILL itself after the grace; this covers a helper that cannot,
      // and the watchdog one that does not answer at all (stopped, wedged): then the server kills
      // the processes itself, so a timeout or cancel always ends the operation.
      backstop ??= setTimeout(() => {
        running.terminate('SIGKILL');
        watchdog = setTimeout(
          () =>
            running.forceEnd(
              `the command's supervisor did not end it within ${String(graceMs + backstopSlackMs + watchdogMs)} ms; the server killed its processes itself`,
            ),
          watchdogMs,
        );
      }, graceMs + backstopSlackMs);
    };
    const timer =
      request.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            stoppedBy = 'timed_out';
            terminate();
          }, timerDelay(request.timeoutMs));
    const onAbort = () => {
      stoppedBy ??= 'cancelled';
      terminate();
    };
    request.signal?.addEventListener('abort', onAbort, { once: true });

    // One wait for the log at a time: pooled output keeps arriving for a moment after pause()
    // (frames already read from the zygote), and each wait would add listeners to the log.
    let waitingForLog = false;
    const watcher = request.onOutput;
    const conversation = this.#conversations.get(request.logName);
    // R15.4: an interactive command left without input or output for its idle time is ended.
    const idleMs = request.interactive?.idleMs ?? DEFAULT_INTERACTIVE_IDLE_MS;
    let idled = false;
    const idle =
      conversation === undefined
        ? undefined
        : setInterval(
            () => {
              if (Date.now() - conversation.lastActivity < idleMs) return;
              idled = true;
              stoppedBy = 'timed_out';
              terminate();
            },
            Math.min(idleMs, idleCheckMs),
          );
    running.onOutput((chunk) => {
      conversation?.output(chunk);
      if (this.#observers.size > 0)
        this.#tell((observer) => observer.output(request.logName, chunk));
      if (watcher !== undefined) {
        try {
          watcher(chunk);
        } catch {
          // A watcher's bug must not lose the command's output or its supervision.
        }
      }
      if (!collector.push(chunk) && !waitingForLog) {
        waitingForLog = true;
        running.pause();
        void collector.drained().then(() => {
          waitingForLog = false;
          running.resume();
        });
      }
    });

    const exit = await running.exit;
    clearTimeout(timer);
    clearInterval(idle);
    clearTimeout(backstop);
    clearTimeout(watchdog);
    request.signal?.removeEventListener('abort', onAbort);
    const status: ExecutionStatus =
      stoppedBy ?? (exit.code === 0 && exit.error === undefined ? 'completed' : 'failed');
    // R15.2: the end of a failed command's output gets the larger share.
    const collected = await collector.finish(status);
    if (this.#live.get(request.logName) === collector) this.#live.delete(request.logName);
    this.#tell((observer) => observer.ended(request.logName));
    const explained =
      status === 'failed' ? this.#explain(collected, request.cwd) : { hints: [], writes: [] };
    return {
      status,
      exitCode: exit.code,
      signal: exit.signal,
      output:
        collected.output +
        endNote(exit, stoppedBy !== undefined) +
        (idled
          ? `ahma: ended after ${String(Math.round(idleMs / 1000))} s without input or output (an interactive command's idle limit)\n`
          : '') +
        explained.hints
          .map((hint, index) => `${index === 0 ? '\n' : ''}[ahma sandbox] ${hint}\n`)
          .join(''),
      truncated: collected.truncated,
      fullOutputPath: collected.fullOutputPath,
      durationMs: performance.now() - started,
      ...(explained.writes.length === 0 ? {} : { writeRefusals: explained.writes }),
    };
  }

  /**
   * R7.13's explanation of the refusals the sandbox made in a failed command (its own output is
   * all that is read, never the elision marker), and the writes refused outside every writable
   * path (R7.18: a person may allow them).
   */
  #explain(collected: CollectedOutput, cwd: string): Explained {
    const env = this.#options.env;
    const text = collected.truncated
      ? collected.output.replace(ELISION_MARKER_LINE, '')
      : collected.output;
    return explainRefusals(text, {
      cwd,
      home: env['HOME'] ?? homedir(),
      sandbox: this.#options.sandbox,
      tempDir: tempDirectory(env),
      explainHandoff: this.#options.explainHandoff,
    });
  }
}

/**
 * R7.11: the lines telling the agent (and so the person) which hand-off files changed: they run
 * later outside any sandbox, so they deserve a look before anything runs them.
 */
function handoffNote(writes: readonly HandoffWrite[], scope: string): string {
  const shown = writes.slice(0, 10).map((write) => {
    const path = relative(scope, write.path);
    return `${write.change} ${path === '' || path.startsWith('..') ? write.path : path}`;
  });
  const more =
    writes.length > shown.length ? `, and ${String(writes.length - shown.length)} more` : '';
  return `\n[ahma sandbox] hand-off files changed while this command ran (git, editors and Ahma run them later outside any sandbox; review them before that): ${shown.join(', ')}${more}\n`;
}

/**
 * R7.17: what the egress proxy refused the command, each with the flag that would allow it; the
 * person may also be asked (the MCP layer adds what they answered).
 */
function networkNote(refusals: readonly NetworkRefusal[]): string {
  return refusals
    .map((refusal) => {
      const rules = askable(refusal) ? grantRules(refusal) : [];
      const fix =
        rules.length === 0
          ? ''
          : ` To allow it: --allow-host ${rules.join(',')} (a server option), or the person's grant.`;
      return `\n[ahma network] ${refusal.reason}.${fix}`;
    })
    .join('')
    .concat('\n');
}

/** A last line saying why the command ended, when its output cannot (empty when it can). */
function endNote(exit: ExitStatus, stopped: boolean): string {
  if (exit.error !== undefined) return `ahma: could not run the command: ${exit.error.message}\n`;
  if (exit.note !== undefined) return `ahma: ${exit.note}\n`;
  // A timeout or cancel says so in the status; any other death by a signal says so here.
  if (exit.signal !== null && !stopped) return `ahma: the command was killed by ${exit.signal}\n`;
  return '';
}

function assertNoNul(command: Command): void {
  const values = command.kind === 'argv' ? command.argv : [command.script];
  if (values.length === 0 || values[0] === '') {
    throw new AhmaError('ARGV_INVALID', 'the command is empty');
  }
  if (values.some((value) => value.includes('\0'))) {
    throw new AhmaError(
      'ARGV_INVALID',
      'an argument contains a NUL byte, which no program can receive',
    );
  }
}

function cancelledBeforeStart(started: number): ExecutionResult {
  return {
    status: 'cancelled',
    exitCode: null,
    signal: null,
    output: '',
    truncated: false,
    fullOutputPath: undefined,
    durationMs: performance.now() - started,
  };
}
