// The pre-warmed shell pool (R4.1, SPEC §5). Spawning from Node costs milliseconds and grows with the
// server's memory, so Node spawns nothing per command: one long-lived, already sandboxed helper (the
// zygote, `ahma-sandbox --pool N`) keeps N warm shells and forks replacements itself. Each warm
// shell serves exactly one command and exits, so nothing (cd, variables, `exit`, background jobs)
// leaks into the next, and each runs under its own supervisor, process group and Landlock domain.
// Node and the zygote talk in frames (R run, K kill; S started, O output, X exit, E error), described
// once, with the processes and their Landlock domains, in docs/native.md.
import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import { AhmaError } from '../errors.js';
import { silentLogger, type Logger } from '../logger.js';
import type { CommandLine, Sandbox } from '../sandbox/sandbox.js';
import type { CommandEnvironment } from './environment.js';
import type { Command } from './execution-types.js';
import { killTree, parentOf } from './kill-tree.js';
import type { ExitStatus, RunningCommand } from './running-command.js';
import { withDefaults, type Timings } from './timings.js';

export interface ShellPoolOptions {
  readonly sandbox: Sandbox;
  readonly env: CommandEnvironment;
  /** Warm shells kept ready (default 2). */
  readonly size?: number;
  /** Idle time after which the zygote and its warm shells are stopped (default 5 minutes). */
  readonly idleMs?: number;
  /** Where the zygote's diagnostics and the pool's own troubles are reported. */
  readonly logger?: Logger;
  /** The waits on the zygote: zygoteAnswerMs, zygoteStopMs (timings.ts; default DEFAULT_TIMINGS). */
  readonly timings?: Partial<Timings> | undefined;
}

export interface ShellPoolStats {
  /** Commands handed to the zygote. */
  readonly pooled: number;
  /** Commands that found no running zygote (and were spawned directly). */
  readonly direct: number;
  /** Zygotes started over the pool's life. */
  readonly starts: number;
  /** Why pooling stopped, when it gave up (commands are then spawned directly). */
  readonly disabledReason: string | undefined;
  /** The running zygote's pid, if one runs. */
  readonly zygotePid: number | undefined;
}

export const DEFAULT_POOL_SIZE = 2;
export const DEFAULT_POOL_IDLE_MS = 5 * 60 * 1000;

const HEADER_BYTES = 9;
/**
 * Zygotes that die young (YOUNG_DEATH_MS) in a row before the pool stops restarting them: one
 * death may be chance (killed from outside), three in a row mean it cannot run here.
 */
const MAX_CRASHES = 3;
/** A zygote that dies sooner than this after its start counts towards MAX_CRASHES. */
const YOUNG_DEATH_MS = 10_000;

interface Pending {
  handler: ((chunk: Buffer) => void) | undefined;
  buffered: Buffer[];
  resolve: (status: ExitStatus) => void;
  /** This command holds the shared output paused (its consumer is behind). */
  paused: boolean;
  /** The unit's supervisor, once the zygote said (its S frame). */
  supervisor: number | undefined;
  /** The zygote running it. */
  readonly zygote: ChildProcess;
}

export class ShellPool {
  readonly #options: ShellPoolOptions;
  readonly #size: number;
  readonly #idleMs: number;
  readonly #timings: Timings;
  readonly #logger: Logger;
  readonly #pending = new Map<number, Pending>();
  #zygote: ChildProcess | undefined;
  #inbox: Buffer = Buffer.alloc(0);
  #nextId = 0;
  #crashes = 0;
  #paused = 0;
  #closed = false;
  #idleTimer: NodeJS.Timeout | undefined;
  #stats = { pooled: 0, direct: 0, starts: 0, disabledReason: undefined as string | undefined };

  constructor(options: ShellPoolOptions) {
    this.#options = options;
    this.#size = options.size ?? DEFAULT_POOL_SIZE;
    this.#idleMs = options.idleMs ?? DEFAULT_POOL_IDLE_MS;
    this.#timings = withDefaults(options.timings);
    this.#logger = options.logger ?? silentLogger;
  }

  get stats(): ShellPoolStats {
    return { ...this.#stats, zygotePid: this.#zygote?.pid };
  }

  /** Starts the zygote ahead of demand (a no-op when it runs or pooling is unavailable). */
  start(): void {
    if (this.#zygote !== undefined || this.#closed || this.#stats.disabledReason !== undefined)
      return;
    const line = this.#options.sandbox.poolCommand(this.#size);
    if (line === undefined) {
      this.#stats.disabledReason = 'this platform has no pool zygote';
      return;
    }
    this.#spawnZygote(line);
  }

  /**
   * Hands `command` to a warm shell, or returns undefined when the zygote is not running (the caller
   * spawns directly, and the zygote is started for the next command). `env`: variables of this
   * command alone, on top of the zygote's (R7.16: its proxy URL); a value may hold anything but NUL.
   * Throws COMMAND_INVALID for a name that is not [A-Za-z_][A-Za-z0-9_]* (or is the bootstrap's own,
   * `__ahma_*`) and for a NUL in a value: the frame could not carry them.
   */
  take(
    command: Command,
    cwd: string,
    env?: Readonly<Record<string, string>>,
  ): RunningCommand | undefined {
    const entries = envFields(env);
    this.#armIdleTimer();
    const zygote = this.#zygote;
    if (zygote === undefined || zygote.stdin === null) {
      this.#stats.direct++;
      setImmediate(() => this.start());
      return undefined;
    }
    this.#stats.pooled++;
    const id = (this.#nextId = (this.#nextId + 1) >>> 0);
    const fields = command.kind === 'argv' ? ['argv', ...command.argv] : ['shell', command.script];
    zygote.stdin.write(frame('R', id, Buffer.from(`${[cwd, ...entries, ...fields].join('\0')}\0`)));
    let resolveExit: (status: ExitStatus) => void = () => undefined;
    const exit = new Promise<ExitStatus>((resolve) => (resolveExit = resolve));
    const pending: Pending = {
      handler: undefined,
      buffered: [],
      resolve: resolveExit,
      paused: false,
      supervisor: undefined,
      zygote,
    };
    this.#pending.set(id, pending);
    return {
      onOutput: (handler) => {
        pending.handler = handler;
        for (const chunk of pending.buffered.splice(0)) handler(chunk);
      },
      // Output of every pooled command shares the zygote's pipe: pausing one pauses all briefly.
      // A command holds at most one pause, released when it resumes or ends (whichever first).
      pause: () => this.#hold(pending, true),
      resume: () => this.#hold(pending, false),
      terminate: (signal) => {
        if (this.#pending.has(id)) {
          this.#zygote?.stdin?.write(frame('K', id, Buffer.from([constants.signals[signal]])));
        }
      },
      forceEnd: (reason) => void this.#forceEnd(id, zygote, reason),
      exit,
    };
  }

  /** Stops the zygote (its warm shells and any running pooled command end with it). */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#idleTimer);
    await this.#stopZygote();
  }

  #spawnZygote(line: CommandLine): void {
    const { sandbox, env } = this.#options;
    const zygote = spawn(line.file, line.args, {
      cwd: sandbox.scope,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    this.#stats.starts++;
    this.#zygote = zygote;
    this.#inbox = Buffer.alloc(0);
    const startedAt = Date.now();
    zygote.stdin?.on('error', () => undefined);
    // Its diagnostics are not protocol: one log line each (read, so the pipe never fills).
    zygote.stderr?.setEncoding('utf8');
    let partial = '';
    zygote.stderr?.on('data', (text: string) => {
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line !== '') this.#logger.warn(`shell pool: ${line}`);
    });
    // Frames of a zygote that was replaced (the watchdog) would garble the new one's.
    zygote.stdout?.on('data', (chunk: Buffer) => {
      if (this.#zygote === zygote) this.#receive(chunk);
    });
    zygote.once('error', () => undefined);
    zygote.once('close', () => {
      // #stopZygote forgets the zygote first, so still being current means it died on its own.
      const died = this.#zygote === zygote;
      if (died) {
        this.#zygote = undefined;
        this.#paused = 0;
      }
      this.#endPendingOf(zygote, () => ({
        code: null,
        signal: null,
        error: new Error('the shell pool stopped while the command ran'),
      }));
      if (!died) return;
      // A zygote that dies young, again and again, is broken: stop trying and spawn directly.
      this.#crashes = Date.now() - startedAt < YOUNG_DEATH_MS ? this.#crashes + 1 : 0;
      if (this.#crashes >= MAX_CRASHES) {
        this.#stats.disabledReason = `the pool zygote died ${String(MAX_CRASHES)} times in a row`;
        this.#logger.warn(
          `shell pool disabled: ${this.#stats.disabledReason}; commands are spawned directly from now on`,
        );
      } else {
        this.#logger.warn('shell pool: the zygote died; it is started again on the next command');
      }
    });
    this.#armIdleTimer();
  }

  /** Ends every command still pending on `zygote`, which is gone, as `end` says for each. */
  #endPendingOf(zygote: ChildProcess, end: (id: number) => ExitStatus): void {
    for (const [id, pending] of this.#pending) {
      if (pending.zygote !== zygote) continue;
      this.#pending.delete(id);
      pending.resolve(end(id));
    }
  }

  /** Takes (true) or releases (false) one command's hold on the zygote's paused output. */
  #hold(pending: Pending, paused: boolean): void {
    if (pending.paused === paused) return;
    pending.paused = paused;
    if (paused && this.#paused++ === 0) this.#zygote?.stdout?.pause();
    if (!paused && --this.#paused === 0) this.#zygote?.stdout?.resume();
  }

  #receive(chunk: Buffer): void {
    this.#inbox = this.#inbox.length === 0 ? chunk : Buffer.concat([this.#inbox, chunk]);
    while (this.#inbox.length >= HEADER_BYTES) {
      const length = this.#inbox.readUInt32LE(5);
      if (this.#inbox.length < HEADER_BYTES + length) return;
      const type = String.fromCharCode(this.#inbox[0] ?? 0);
      const id = this.#inbox.readUInt32LE(1);
      const payload = this.#inbox.subarray(HEADER_BYTES, HEADER_BYTES + length);
      this.#inbox = this.#inbox.subarray(HEADER_BYTES + length);
      this.#dispatch(type, id, payload);
    }
  }

  #dispatch(type: string, id: number, payload: Buffer): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    switch (type) {
      case 'O': {
        // Copy: the payload is a view into the inbox buffer, which is reused.
        const chunk = Buffer.from(payload);
        if (pending.handler === undefined) pending.buffered.push(chunk);
        else pending.handler(chunk);
        return;
      }
      case 'X': {
        this.#pending.delete(id);
        this.#hold(pending, false);
        const code = payload.readInt32LE(0);
        const signal = signalName(payload.readInt32LE(4));
        pending.resolve({ code: code < 0 ? null : code, signal });
        return;
      }
      case 'E':
        this.#pending.delete(id);
        this.#hold(pending, false);
        pending.resolve({ code: null, signal: null, error: new Error(payload.toString('utf8')) });
        return;
      case 'S':
        // Commands are stopped through the zygote by id; the pid is for the watchdog.
        pending.supervisor = payload.readUInt32LE(0);
        return;
      default:
        return;
    }
  }

  /**
   * The watchdog (R7.6): the zygote did not end a command it was told to kill. The server kills
   * the unit's tree itself; if the zygote then does not report the end either (zygoteAnswerMs), it is wedged
   * (stopped, say): it and every unit are killed, their commands end with the reason, and the next
   * command starts a new zygote.
   */
  async #forceEnd(id: number, zygote: ChildProcess, reason: string): Promise<void> {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    // Still the zygote's child, so still the supervisor (not a pid reused since it was reaped).
    const supervisor = pending.supervisor;
    if (supervisor !== undefined && parentOf(supervisor) === zygote.pid) await killTree(supervisor);
    await new Promise((resolve) => setTimeout(resolve, this.#timings.zygoteAnswerMs));
    if (!this.#pending.has(id) || this.#zygote !== zygote) return;
    this.#logger.warn(
      `shell pool: the zygote (pid ${String(zygote.pid)}) did not answer; killing it and its commands, and starting a new one`,
    );
    this.#zygote = undefined; // not a crash: 'close' must not count it
    this.#paused = 0;
    this.#endPendingOf(zygote, (otherId) => ({
      code: null,
      signal: 'SIGKILL',
      note:
        otherId === id
          ? reason
          : 'the shell pool stopped answering and was restarted; this command was killed with it',
    }));
    if (zygote.pid !== undefined) await killTree(zygote.pid);
    this.start();
  }

  /** An idle pool is reaped: warm shells hold processes and memory nobody is using. */
  #armIdleTimer(): void {
    clearTimeout(this.#idleTimer);
    if (this.#closed) return;
    this.#idleTimer = setTimeout(() => {
      if (this.#pending.size === 0) void this.#stopZygote();
      else this.#armIdleTimer();
    }, this.#idleMs);
    this.#idleTimer.unref();
  }

  /** Ends the zygote's input, which makes it stop its shells and exit; waits for that. */
  async #stopZygote(): Promise<void> {
    const zygote = this.#zygote;
    if (zygote === undefined) return;
    this.#zygote = undefined;
    if (zygote.exitCode !== null || zygote.signalCode !== null) return;
    const closed = new Promise((resolve) => zygote.once('close', resolve));
    zygote.stdin?.end();
    const force = setTimeout(() => {
      if (zygote.pid !== undefined) process.kill(zygote.pid, 'SIGTERM');
    }, this.#timings.zygoteStopMs);
    await closed;
    clearTimeout(force);
  }
}

/**
 * The run request's environment fields (docs/native.md): `=NAME=VALUE` each, between the working
 * directory and the mode, which never starts with `=`.
 */
function envFields(env: Readonly<Record<string, string>> | undefined): string[] {
  return Object.entries(env ?? {}).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || name.startsWith('__ahma_')) {
      throw new AhmaError(
        'COMMAND_INVALID',
        `cannot pass the environment variable ${JSON.stringify(name)} to a pooled command: a name must match [A-Za-z_][A-Za-z0-9_]* and not begin with __ahma_`,
      );
    }
    if (value.includes('\0')) {
      throw new AhmaError(
        'COMMAND_INVALID',
        `cannot pass the environment variable ${name} to a pooled command: its value holds a NUL byte`,
      );
    }
    return `=${name}=${value}`;
  });
}

function frame(type: 'R' | 'K', id: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.write(type, 0, 'latin1');
  header.writeUInt32LE(id, 1);
  header.writeUInt32LE(payload.length, 5);
  return Buffer.concat([header, payload]);
}

function signalName(number: number): NodeJS.Signals | null {
  if (number === 0) return null;
  const entry = Object.entries(constants.signals).find(([, value]) => value === number);
  return (entry?.[0] as NodeJS.Signals | undefined) ?? null;
}
