// Running a tool call as an operation, for every front end (MCP connections, the one-shot CLI):
// blocking or with the inline wait, heartbeats while the call is open, the caller's cancellation
// killing the command, and the hand-off of a still-running operation to its completion push.
import {
  EXECUTION_MODES,
  type Engine,
  type OperationSnapshot,
  type OperationTask,
} from '@ahma/core';
import { startHeartbeat, type ProgressReporter } from './heartbeat.js';
import type { PersonAsker } from './grants.js';

/** The call being served: its cancellation, its progress, and what the connection wants to know. */
export interface CallContext {
  readonly signal: AbortSignal;
  /** Progress of this call, when its request asked for it. */
  readonly progress: ProgressReporter | undefined;
  /** An operation of this call started (the connection owns it: its alerts go there). */
  readonly started?: ((operationId: string) => void) | undefined;
  /**
   * The connection the operation belongs to (OperationManager's owner): once it has ended, the
   * history keeps only a summary of the operation's result.
   */
  readonly owner?: string | undefined;
  /** The call is answered while its operation runs: push the completion later. */
  readonly pushLater?: ((operationId: string) => void) | undefined;
  /**
   * The call is a task (SPEC §12): it answers at once with the running operation, whatever the
   * tool's mode, and its result is fetched through the task, never pushed.
   */
  readonly detached?: boolean;
  /**
   * Nothing can be pushed to this client later (a 2026-07-28 client without tasks): an
   * asynchronous call stays open, with heartbeats, until its command ends (SPEC §12).
   */
  readonly keepOpen?: boolean;
  /** R7.18: asks the person through the client (MCP elicitation); absent: it cannot be asked. */
  readonly asker?: PersonAsker | undefined;
}

export interface RunnerSettings {
  readonly operations: Engine['operations'];
  /** --inline-wait: how long an async call waits for its command before answering `started`. */
  readonly inlineWaitMs: number;
  /** How often an open call with a progress reporter hears progress. */
  readonly heartbeatMs: number;
}

/**
 * Whether a call blocks: --sync makes every call block (R3.4); otherwise the call's execution_mode
 * (R10.1) overrides the tool's own mode (R2.6).
 */
export function blocks(
  forceSync: boolean,
  toolIsSynchronous: boolean,
  args: Readonly<Record<string, unknown>>,
): boolean {
  if (forceSync) return true;
  const mode = args['execution_mode'];
  if (mode === EXECUTION_MODES[0]) return true;
  if (mode === EXECUTION_MODES[1]) return false;
  return toolIsSynchronous;
}

/**
 * One operation. A blocking call waits for it to end. An async call waits up to the inline wait
 * (SPEC §3) and resolves to the finished operation when the command ends in time; otherwise to the
 * running one, whose completion the caller is told to push (`pushLater`). While the call is open it
 * sends progress heartbeats, and the call's signal aborting kills the command.
 */
export async function runOperation(
  settings: RunnerSettings,
  name: string,
  blocking: boolean,
  task: OperationTask,
  call: CallContext,
  /** The last line the command printed so far, shown in the heartbeats. */
  lastLine?: () => string | undefined,
): Promise<OperationSnapshot> {
  const { operations } = settings;
  const operation = operations.start(name, task, { owner: call.owner });
  call.started?.(operation.id);
  // A call queued behind another writer of its workspace answers at once that it waits, and for
  // whom, rather than after the inline wait (unless it blocks: then it waits its turn).
  const waitMs =
    call.detached === true
      ? 0
      : blocking || call.keepOpen === true
        ? undefined
        : operation.queued === undefined
          ? settings.inlineWaitMs
          : 0;
  if (waitMs !== 0) {
    const onAbort = () => operations.cancel(operation.id, 'the client cancelled the request');
    call.signal.addEventListener('abort', onAbort, { once: true });
    const stop = startHeartbeat(call.progress, settings.heartbeatMs, (seconds) => {
      const queued = operations.status([operation.id])[0]?.queued;
      if (queued !== undefined) {
        return `${operation.id} (${name}) waiting ${String(seconds)} s for its workspace, behind ${queued.behind} (${String(queued.position)} in line)`;
      }
      const line = lastLine?.();
      const running = `${operation.id} (${name}) running for ${String(seconds)} s`;
      return line === undefined ? running : `${running}; last output: ${line}`;
    });
    try {
      const [finished] = await operations.await([operation.id], waitMs);
      if (finished !== undefined && finished.status !== 'running') return finished;
    } finally {
      await stop();
      call.signal.removeEventListener('abort', onAbort);
    }
  }
  // Checked and handed over in one step: a completion from now on finds the id and is pushed.
  const [now] = operations.status([operation.id]);
  if (now !== undefined && now.status !== 'running') return now;
  // A request the client cancelled gets no answer, so nothing may later name its operation (the
  // command may still be dying within its kill grace).
  if (!call.signal.aborted && call.detached !== true) call.pushLater?.(operation.id);
  return now ?? operation;
}
