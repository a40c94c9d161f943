// One isolated session's process started ahead (R8D.3). A session's process cannot start before
// the client has named its root, and most of its start is loading its code (about 110 of the
// 190 ms a process takes to serve its first tools/list here): a spare has done that while no one
// waited. The next session to lock its scope takes it and names the scope (spare-scope.ts); only
// then does the process build its sandbox and runtime, as any session's process does. So a spare
// holds no scope, no sandbox and no runtime, and runs no command until it is taken.
//
// At most one spare lives at a time, and a replacement starts as one is taken (a session may take
// one still loading: it reads its scope once it is ready). A session that finds none (the spare
// died) starts its process itself, as before.
import type { Environment } from '@ahma/core';
import type { Logger } from 'pino';
import { SessionChild, type ChildCommand } from './child.js';

export interface SpareOptions {
  /** The program, without `--sandbox-scope` (as ProcessSlotOptions.command). */
  readonly command: ChildCommand;
  readonly env: Environment;
  readonly logger: Logger;
  /** How long a stopped spare gets to exit before it is killed. */
  readonly stopGraceMs: number;
}

export class SpareProcess {
  readonly #options: SpareOptions;
  #spare: SessionChild | undefined;
  #closed = false;

  constructor(options: SpareOptions) {
    this.#options = options;
    this.#start();
  }

  /** The pid of the spare waiting now, if any. */
  get pid(): number | undefined {
    return this.#spare?.pid;
  }

  /**
   * The spare, if there is one, for the caller to assign() a scope (which refuses one that has
   * ended); a replacement starts now. Undefined when there is none.
   */
  take(): SessionChild | undefined {
    const spare = this.#spare;
    this.#spare = undefined;
    if (this.#closed) return undefined;
    this.#start();
    return spare;
  }

  /** Stops the spare; none starts again. */
  async close(): Promise<void> {
    this.#closed = true;
    const spare = this.#spare;
    this.#spare = undefined;
    await spare?.stop(this.#options.stopGraceMs);
  }

  #start(): void {
    const { command, env, logger } = this.#options;
    const spare: SessionChild = new SessionChild({
      command,
      scope: undefined,
      env,
      onLine: () => undefined,
      onStderrLine: (line) => logger.info({ spareProcess: spare.pid }, line),
      onExit: (exit) => {
        // A spare that ends unasked is not replaced at once: the next take() starts one.
        if (this.#spare !== spare) return;
        this.#spare = undefined;
        logger.warn(
          { spareProcess: spare.pid, ...exit, lastWords: spare.lastWords() },
          'isolated sessions: the spare process ended before a session took it',
        );
      },
    });
    this.#spare = spare;
  }
}
