// The process of an isolated session, one at a time, read as JSON-RPC messages and written to as
// lines. The rule: only the current process is heard;
// once it is replaced or stopped, whatever an older one still prints or however it exits reaches
// no one (each start is a new generation, and the callbacks of an older one are dropped). A stop
// is not awaited where it is asked for, but close() awaits every stop begun, so a session that is
// closed has left no process behind (R8D.10).
import type { Environment } from '@ahma/core';
import type { Logger } from 'pino';
import { classify, type MessageKind } from '../jsonrpc/message-kind.js';
import { SessionChild, type ChildCommand, type ChildExit, type ChildHandlers } from './child.js';
import type { SpareProcess } from './spare.js';

export const DEFAULT_STOP_GRACE_MS = 3_000;

export interface ProcessSlotOptions {
  /** The program, without `--sandbox-scope` (appended per process). */
  readonly command: ChildCommand;
  /** The processes' environment (the server's). */
  readonly env: Environment;
  readonly logger: Logger;
  /** How long a stopped process gets to close its runtime before its tree is killed. */
  readonly stopGraceMs?: number | undefined;
  /** Processes started ahead with the same command and environment, taken first. */
  readonly spare?: SpareProcess | undefined;
  /** A JSON-RPC message of the current process (a line of its stdout that is none is logged). */
  readonly onMessage: (message: MessageKind) => void;
  /** The current process exited unasked; the slot is empty now. */
  readonly onExit: (exit: ChildExit, lastWords: string | undefined) => void;
}

export class ProcessSlot {
  readonly #options: ProcessSlotOptions;
  readonly #stopGraceMs: number;
  #child: SessionChild | undefined;
  /** The scope of the last process started (kept after it exited, for the log). */
  #scope: string | undefined;
  /** Bumped whenever the current process is replaced or stopped: older ones are not heard. */
  #generation = 0;
  readonly #stopping = new Set<Promise<void>>();

  constructor(options: ProcessSlotOptions) {
    this.#options = options;
    this.#stopGraceMs = options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
  }

  /** The pid of the current process (undefined between two). */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** The scope of the last process started. */
  get scope(): string | undefined {
    return this.#scope;
  }

  /** Starts a process on `scope` (the slot is empty: after stop(), or after its process exited). */
  start(scope: string): void {
    this.#generation += 1;
    const generation = this.#generation;
    this.#scope = scope;
    const handlers: ChildHandlers = {
      onLine: (line) => {
        if (generation === this.#generation) this.#read(line);
      },
      onStderrLine: (line) => this.#options.logger.info({ sessionProcess: child.pid }, line),
      onExit: (exit) => {
        if (generation !== this.#generation) return;
        this.#child = undefined;
        this.#options.onExit(exit, child.lastWords());
      },
    };
    // A process started ahead, if there is one (spare.ts); else one started now.
    const spare = this.#options.spare?.take();
    const child: SessionChild =
      spare?.assign(scope, handlers) === true
        ? spare
        : new SessionChild({
            command: this.#options.command,
            scope,
            env: this.#options.env,
            ...handlers,
          });
    // `ps` shows a spare's scope nowhere (it came on stdin): the log says which process has it.
    this.#options.logger.info(
      { sessionProcess: child.pid, scope, startedAhead: child === spare },
      "isolated session: the session's process",
    );
    this.#child = child;
  }

  /** One message to the current process (none: dropped). */
  write(message: unknown): void {
    this.#child?.write(JSON.stringify(message));
  }

  /** Stops the current process and everything under it; from now on it is not heard. */
  stop(): void {
    this.#generation += 1;
    const child = this.#child;
    this.#child = undefined;
    if (child === undefined) return;
    const stopped = child.stop(this.#stopGraceMs).catch((error: unknown) => {
      this.#options.logger.warn(
        { err: error },
        "isolated session: stopping the session's process failed",
      );
    });
    this.#stopping.add(stopped);
    void stopped.finally(() => this.#stopping.delete(stopped));
  }

  /** Resolves once every stop begun so far has ended. */
  async stopped(): Promise<void> {
    await Promise.all([...this.#stopping]);
  }

  #read(line: string): void {
    const { logger } = this.#options;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      logger.warn({ line: line.slice(0, 200) }, 'isolated session: a line that is not JSON');
      return;
    }
    const message = classify(value);
    if (message === undefined) {
      logger.warn({ line: line.slice(0, 200) }, 'isolated session: not a JSON-RPC message');
      return;
    }
    this.#options.onMessage(message);
  }
}
