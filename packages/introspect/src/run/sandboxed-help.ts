// Runs `PROGRAM ARGS…` to read its help, in Ahma's sandbox like any command: a scope of its own (an
// empty temporary directory, so a program that writes where it stands writes nothing that
// matters), no network, stdin closed, a timeout, and an environment that asks for plain, stable
// text (LC_ALL=C, no colours, no pager, a fixed width). A program's help is its own code running:
// never unconfined.
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createEngine, MAX_MAX_OUTPUT_TOKENS, type Engine, type Environment } from '@ahma/core';

/** Longest a help command may run. */
export const HELP_TIMEOUT_MS = 10_000;

/** What the program printed, and how it ended. */
export interface HelpRun {
  readonly text: string;
  readonly exitCode: number | null;
  /** `completed`, or why the sandbox stopped it (`timed_out`, …). */
  readonly status: string;
  /**
   * What the sandbox added after the program's output: why it refused something, and how to allow
   * it (`[ahma sandbox] … --allow-read PATH adds it`). Not the program's help, so not in `text`.
   */
  readonly sandboxHints: readonly string[];
}

export interface SandboxedHelpOptions {
  /** The environment the program's own is made from (PATH finds it); default the process's. */
  readonly env?: Environment;
  /** Ahma's private state for this run; default the usual state root. */
  readonly stateDir?: string;
  /**
   * Directories the help command may also read: the program's own when it is named by a path
   * outside the paths commands read anyway (introspect.ts). The person named it.
   */
  readonly readable?: readonly string[];
  /**
   * Variables (names or globs) the program must not see, beside what the engine always removes:
   * a server that introspects passes its own secrets (R7.9), as for any command it runs.
   */
  readonly envDeny?: readonly string[];
}

/** How the sandbox's own lines after a command's output begin (core's refusal hints). */
const SANDBOX_HINT = '[ahma sandbox] ';

/** Variables that make help text plain and the same from one machine to the next. */
const PLAIN_TEXT: Readonly<Record<string, string>> = {
  LC_ALL: 'C',
  LANG: 'C',
  COLUMNS: '100',
  TERM: 'dumb',
  NO_COLOR: '1',
  PAGER: 'cat',
  GIT_PAGER: 'cat',
  MANPAGER: 'cat',
  GH_PAGER: 'cat',
  CLICOLOR: '0',
};

export class SandboxedHelp {
  readonly #engine: Engine;
  readonly #scope: string;
  #runs = 0;
  #closed: Promise<void> | undefined;

  private constructor(engine: Engine, scope: string) {
    this.#engine = engine;
    this.#scope = scope;
  }

  static async start(options: SandboxedHelpOptions = {}): Promise<SandboxedHelp> {
    // Under /var/tmp: the engine refuses a scope that holds its own code, and wants one that
    // outlives nothing — this one is removed at close.
    const scope = await realpath(await mkdtemp(join('/var/tmp', 'ahma-introspect-')));
    try {
      const engine = await createEngine({
        scope,
        env: { ...(options.env ?? process.env), ...PLAIN_TEXT },
        network: 'none',
        noShellPool: true,
        ...(options.stateDir === undefined ? {} : { stateDir: options.stateDir }),
        extraReadable: options.readable ?? [],
        envDeny: options.envDeny ?? [],
      });
      return new SandboxedHelp(engine, scope);
    } catch (error) {
      await rm(scope, { recursive: true, force: true });
      throw error;
    }
  }

  /** `program args…`, confined, its merged output as text. */
  async run(program: string, args: readonly string[]): Promise<HelpRun> {
    this.#runs += 1;
    const result = await this.#engine.executor.run({
      command: { kind: 'argv', argv: [program, ...args] },
      cwd: this.#scope,
      timeoutMs: HELP_TIMEOUT_MS,
      logName: `help-${String(this.#runs)}`,
      network: 'none',
      // The whole text (curl's and rsync's run to tens of kilobytes), not the agent's budget.
      maxOutputTokens: MAX_MAX_OUTPUT_TOKENS,
    });
    const lines = result.output.split('\n');
    const hint = (line: string) => line.startsWith(SANDBOX_HINT);
    return {
      text: lines.filter((line) => !hint(line)).join('\n'),
      sandboxHints: lines.filter(hint).map((line) => line.slice(SANDBOX_HINT.length)),
      exitCode: result.exitCode,
      status: result.status,
    };
  }

  /** Stops a help still running (an introspection given up) and removes the scope. Idempotent. */
  close(): Promise<void> {
    return (this.#closed ??= (async () => {
      await this.#engine.close();
      await rm(this.#scope, { recursive: true, force: true });
    })());
  }
}
