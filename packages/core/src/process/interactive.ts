// R15.4: commands a model talks to while they run — a REPL, a prompt that wants an answer, a
// program that insists on a terminal. Such a command runs with its stdin open (a pipe from the
// server; with a pseudo-terminal, the helper's relay writes it into the terminal), and its
// conversation is reachable by its operation id: `write_stdin` writes, then listens to what the
// command prints next. One left silent for too long is ended, so a forgotten REPL does not live on.
import type { Writable } from 'node:stream';
import { stripAnsi } from './output.js';

/** How a command is run for a conversation. */
export interface InteractiveRequest {
  /** A pseudo-terminal of this size (Linux); absent: only stdin is open. */
  readonly pty?: { readonly cols: number; readonly rows: number } | undefined;
  /** Ended after this long without input or output (default 10 minutes). */
  readonly idleMs?: number | undefined;
}

export const DEFAULT_INTERACTIVE_IDLE_MS = 10 * 60 * 1000;
/** What one answer carries at most (the rest stays in the command's output and log). */
const MAX_ANSWER_BYTES = 32 * 1024;
/** After the first output, this much silence ends the wait: the command is waiting again. */
const QUIET_MS = 300;

export interface Answer {
  /** What the command printed while we listened (ANSI stripped, bounded). */
  readonly output: string;
  /** The command ended while we listened. */
  readonly ended: boolean;
  readonly truncated: boolean;
}

/** One running command's open stdin and its output as it comes. */
export class Conversation {
  readonly #stdin: Writable;
  readonly #listeners = new Set<(chunk: Buffer) => void>();
  readonly #endListeners = new Set<() => void>();
  #ended = false;
  #lastActivity = Date.now();

  constructor(stdin: Writable) {
    this.#stdin = stdin;
    // A command that stopped reading (it ended) must not crash the server with EPIPE.
    stdin.on('error', () => undefined);
  }

  /** When input or output last happened (the idle timer's reference). */
  get lastActivity(): number {
    return this.#lastActivity;
  }

  /** The command printed `chunk` (the executor calls this for every piece of output). */
  output(chunk: Buffer): void {
    this.#lastActivity = Date.now();
    for (const listener of this.#listeners) listener(chunk);
  }

  /** The command ended. */
  end(): void {
    this.#ended = true;
    for (const listener of this.#endListeners) listener();
    this.#listeners.clear();
    this.#endListeners.clear();
  }

  /**
   * Writes `input` to the command, then listens until `waitMs` passed, the command ended, or it
   * printed something and then fell silent for a moment. Rejects when the command has ended.
   */
  async send(input: string, waitMs: number): Promise<Answer> {
    if (this.#ended || this.#stdin.writableEnded || this.#stdin.destroyed) {
      throw new Error('the command has ended, or its input is closed');
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    let ended = false;
    let settle: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (settle = resolve));
    let quiet: NodeJS.Timeout | undefined;
    const listener = (chunk: Buffer) => {
      if (size < MAX_ANSWER_BYTES) {
        chunks.push(chunk.subarray(0, MAX_ANSWER_BYTES - size));
        size += Math.min(chunk.length, MAX_ANSWER_BYTES - size);
      } else {
        truncated = true;
      }
      clearTimeout(quiet);
      quiet = setTimeout(settle, QUIET_MS);
    };
    const onEnd = () => {
      ended = true;
      settle();
    };
    this.#listeners.add(listener);
    this.#endListeners.add(onEnd);
    const limit = setTimeout(settle, waitMs);
    try {
      this.#lastActivity = Date.now();
      this.#stdin.write(input);
      await done;
    } finally {
      clearTimeout(limit);
      clearTimeout(quiet);
      this.#listeners.delete(listener);
      this.#endListeners.delete(onEnd);
    }
    return {
      output: stripAnsi(Buffer.concat(chunks).toString('utf8')),
      ended,
      truncated,
    };
  }
}
