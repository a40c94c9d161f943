// Operations: every command an agent starts, with a unique id, a lifecycle (running → completed |
// failed | timed_out | cancelled), completion events for the server to push, and a bounded history.
import { randomBytes } from 'node:crypto';
import { AhmaError } from '../errors.js';
import type { LanePlace, WorkspaceLanes } from '../lanes/workspace-lanes.js';
import type { ExecutionResult, ExecutionStatus } from '../process/execution-types.js';
import { timerDelay } from '../process/timer.js';

export type OperationStatus = 'running' | ExecutionStatus;

export interface OperationSnapshot {
  readonly id: string;
  readonly tool: string;
  readonly status: OperationStatus;
  readonly startedAt: Date;
  readonly finishedAt: Date | undefined;
  /** The final result once the operation has finished. */
  readonly result: OperationResult | undefined;
  /** The reason given to cancel(), when it was cancelled. */
  readonly cancelReason: string | undefined;
  /** Where it waits for its workspace (an exclusive call queued behind another), if it does. */
  readonly queued?: LanePlace | undefined;
}

/** A finished operation's result: the execution result, or a summary for multi-step runs. */
export type OperationResult = ExecutionResult;

/** What runs an operation: given a cancellation signal, resolves with its result. */
export type OperationTask = (signal: AbortSignal, id: string) => Promise<OperationResult>;

export type CompletionListener = (operation: OperationSnapshot) => void;

/** Something a running operation reports before it ends (a livelog tool's detected issue). */
export interface OperationAlert {
  readonly operationId: string;
  readonly tool: string;
  /** One line for the agent. */
  readonly summary: string;
  /** What it is about (the chunk of output that raised it). */
  readonly detail: string;
}

export type AlertListener = (alert: OperationAlert) => void;

/**
 * How the engine ties stored results to the logs they name (SPEC §4 "Resources"): a log goes when
 * its operation leaves the history, and a result is shown as its logs are now.
 */
export interface OperationHooks {
  /** A finished operation left the bounded history: nothing will show its result again. */
  readonly onForget?: (result: OperationResult) => void;
  /** A stored result as it must be shown now (a log it names may have been deleted since). */
  readonly present?: (result: OperationResult) => OperationResult;
  /**
   * What a finished operation keeps once its owner has ended (ownerEnded): a smaller result
   * (summarizeResult). Without it the result is kept whole.
   */
  readonly summarize?: (result: OperationResult) => OperationResult;
}

export interface StartOptions {
  /**
   * Who started it (an MCP connection): when that owner ends (ownerEnded), the operation's result
   * is summarized in the history, since nobody is waiting for it any more.
   */
  readonly owner?: string | undefined;
}

export interface OperationManagerOptions {
  /** Finished operations kept for status/await (default 500). */
  readonly historyCount?: number;
  /** Total output bytes kept in the history (default 32 MiB). */
  readonly historyBytes?: number;
  /** Receives errors thrown by completion listeners, which must not stop the other listeners. */
  readonly onListenerError?: (error: unknown) => void;
  /** The workspace lanes operations wait in: a snapshot says where it waits. */
  readonly lanes?: WorkspaceLanes | undefined;
}

interface Entry {
  readonly id: string;
  readonly tool: string;
  readonly startedAt: Date;
  readonly controller: AbortController;
  readonly done: Promise<void>;
  status: OperationStatus;
  finishedAt: Date | undefined;
  result: OperationResult | undefined;
  cancelReason: string | undefined;
  owner: string | undefined;
  /** Its owner ended while it ran: summarize its result when it finishes. */
  summarize: boolean;
}

export class OperationManager {
  readonly #historyCount: number;
  readonly #historyBytes: number;
  readonly #onListenerError: (error: unknown) => void;
  readonly #hooks: OperationHooks;
  readonly #lanes: WorkspaceLanes | undefined;
  /** Running and finished operations in start order; finished ones are evicted oldest first. */
  readonly #entries = new Map<string, Entry>();
  readonly #listeners = new Set<CompletionListener>();
  readonly #alertListeners = new Set<AlertListener>();
  readonly #prefix = randomBytes(3).toString('hex');
  #counter = 0;
  #historySize = 0;
  /** Finished entries in #entries (kept as a count: every completion checks the bounds). */
  #finished = 0;
  #closed = false;

  constructor(options: OperationManagerOptions = {}, hooks: OperationHooks = {}) {
    this.#historyCount = options.historyCount ?? 500;
    this.#historyBytes = options.historyBytes ?? 32 * 1024 * 1024;
    this.#onListenerError = options.onListenerError ?? (() => undefined);
    this.#hooks = hooks;
    this.#lanes = options.lanes;
  }

  /** Starts `task` in the background and returns its operation at once. */
  start(tool: string, task: OperationTask, options: StartOptions = {}): OperationSnapshot {
    if (this.#closed) throw new AhmaError('OPERATION_UNKNOWN', 'the engine is shutting down');
    // Unique for the process's life: a per-process random prefix and a counter.
    const id = `op_${this.#prefix}_${String(++this.#counter)}`;
    const controller = new AbortController();
    let finish: () => void = () => undefined;
    const entry: Entry = {
      id,
      tool,
      startedAt: new Date(),
      controller,
      done: new Promise((resolve) => (finish = resolve)),
      status: 'running',
      finishedAt: undefined,
      result: undefined,
      cancelReason: undefined,
      owner: options.owner,
      summarize: false,
    };
    this.#entries.set(id, entry);
    void task(controller.signal, id)
      .catch((error: unknown) => failure(error, entry.startedAt))
      .then((result) => {
        entry.result = entry.summarize ? this.#summarized(result) : result;
        entry.status = result.status;
        entry.finishedAt = new Date();
        this.#historySize += Buffer.byteLength(entry.result.output);
        this.#finished++;
        this.#evict();
        finish();
        const snapshot = this.#snapshot(entry);
        for (const listener of this.#listeners) {
          try {
            listener(snapshot);
          } catch (error) {
            this.#onListenerError(error);
          }
        }
      });
    return this.#snapshot(entry);
  }

  /**
   * The owner of some operations (an MCP connection) has ended: nobody will be pushed their
   * results, so the history keeps only a summary of each (OperationHooks.summarize) — now for
   * those that have finished, at their end for those still running. `status` and `await` still
   * answer them, with their status, exit code and the end of their output.
   */
  ownerEnded(owner: string): void {
    for (const entry of this.#entries.values()) {
      if (entry.owner !== owner) continue;
      entry.owner = undefined;
      if (entry.status === 'running' || entry.result === undefined) {
        entry.summarize = true;
        continue;
      }
      const before = Buffer.byteLength(entry.result.output);
      entry.result = this.#summarized(entry.result);
      this.#historySize += Buffer.byteLength(entry.result.output) - before;
    }
  }

  /** How many completion and alert listeners are subscribed (each connection has its own). */
  get listenerCounts(): { readonly complete: number; readonly alert: number } {
    return { complete: this.#listeners.size, alert: this.#alertListeners.size };
  }

  /** Subscribes to completions; returns the unsubscribe function. */
  onComplete(listener: CompletionListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Subscribes to alerts of running operations; returns the unsubscribe function. */
  onAlert(listener: AlertListener): () => void {
    this.#alertListeners.add(listener);
    return () => this.#alertListeners.delete(listener);
  }

  /** Reports an alert of a running operation to every subscriber; false once it has finished. */
  alert(id: string, summary: string, detail: string): boolean {
    const entry = this.#entries.get(id);
    if (entry === undefined || entry.status !== 'running') return false;
    const alert: OperationAlert = { operationId: id, tool: entry.tool, summary, detail };
    for (const listener of this.#alertListeners) {
      try {
        listener(alert);
      } catch (error) {
        this.#onListenerError(error);
      }
    }
    return true;
  }

  /** Non-blocking snapshot of the named operations, or of every known one. */
  status(ids?: readonly string[]): OperationSnapshot[] {
    return this.#select(ids).map((entry) => this.#snapshot(entry));
  }

  /**
   * Waits until the named operations (or, without ids, all running ones) have finished, or the
   * timeout passes, or `signal` aborts; returns their snapshots either way.
   */
  async await(
    ids?: readonly string[],
    timeoutMs?: number,
    signal?: AbortSignal,
  ): Promise<OperationSnapshot[]> {
    const entries =
      ids === undefined
        ? [...this.#entries.values()].filter((e) => e.status === 'running')
        : this.#select(ids);
    const waits: Promise<unknown>[] = [Promise.all(entries.map((entry) => entry.done))];
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    if (timeoutMs !== undefined) {
      waits.push(new Promise((resolve) => (timer = setTimeout(resolve, timerDelay(timeoutMs)))));
    }
    if (signal !== undefined) {
      waits.push(
        new Promise<void>((resolve) => {
          onAbort = () => resolve();
          signal.addEventListener('abort', onAbort, { once: true });
        }),
      );
    }
    await Promise.race(waits);
    clearTimeout(timer);
    if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
    return entries.map((entry) => this.#snapshot(entry));
  }

  /** Kills the operation's processes and marks it cancelled; false when it had already finished. */
  cancel(id: string, reason?: string): boolean {
    const entry = this.#entries.get(id);
    if (entry === undefined) throw unknown(id);
    if (entry.status !== 'running') return false;
    entry.cancelReason = reason;
    entry.controller.abort(new Error(reason ?? 'cancelled'));
    return true;
  }

  /** Cancels everything running and waits for it to end; no new operation starts afterwards. */
  async shutdown(): Promise<void> {
    this.#closed = true;
    const running = [...this.#entries.values()].filter((entry) => entry.status === 'running');
    for (const entry of running) entry.controller.abort(new Error('the server is shutting down'));
    await Promise.all(running.map((entry) => entry.done));
  }

  #select(ids: readonly string[] | undefined): Entry[] {
    if (ids === undefined) return [...this.#entries.values()];
    return ids.map((id) => {
      const entry = this.#entries.get(id);
      if (entry === undefined) throw unknown(id);
      return entry;
    });
  }

  /** Drops the oldest finished operations beyond the history bounds. */
  #evict(): void {
    for (const entry of this.#entries.values()) {
      if (this.#finished <= this.#historyCount && this.#historySize <= this.#historyBytes) return;
      if (entry.status === 'running') continue;
      this.#entries.delete(entry.id);
      this.#historySize -= Buffer.byteLength(entry.result?.output ?? '');
      this.#finished--;
      if (entry.result !== undefined) this.#hooks.onForget?.(entry.result);
    }
  }

  #summarized(result: OperationResult): OperationResult {
    return this.#hooks.summarize?.(result) ?? result;
  }

  #snapshot(entry: Entry): OperationSnapshot {
    const present = this.#hooks.present;
    return {
      id: entry.id,
      tool: entry.tool,
      status: entry.status,
      startedAt: entry.startedAt,
      finishedAt: entry.finishedAt,
      result:
        entry.result === undefined || present === undefined ? entry.result : present(entry.result),
      cancelReason: entry.cancelReason,
      ...(entry.status === 'running' ? { queued: this.#lanes?.placeOf(entry.id) } : {}),
    };
  }
}

function unknown(id: string): AhmaError {
  return new AhmaError(
    'OPERATION_UNKNOWN',
    `no operation "${id}": it never existed or has left the bounded history`,
  );
}

/** A task that threw (a bug or a refused argument) still ends as a failed operation. */
function failure(error: unknown, startedAt: Date): OperationResult {
  return {
    status: 'failed',
    exitCode: null,
    signal: null,
    output: error instanceof Error ? error.message : String(error),
    truncated: false,
    fullOutputPath: undefined,
    durationMs: Date.now() - startedAt.getTime(),
  };
}
