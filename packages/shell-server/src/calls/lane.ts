// A call's workspace lane (docs/tool-definitions.md, "Workspace lanes"): an exclusive call takes
// its turn at its workspace — the operation waits in line, holding nothing, and gives the workspace
// to the next one once its process tree has exited — and a call sent again while it still waits is
// answered by the waiting operation instead of running twice.
import type { Engine, Lane, OperationSnapshot, OperationTask } from '@ahma/core';

export interface LaneCall {
  readonly lane: Lane;
  /** The workspace an exclusive call waits for; undefined in the other lanes. */
  readonly workspace: string | undefined;
  /** Who runs what, where (a call sent again by the same connection has the same one). */
  readonly fingerprint: string;
}

export function laneCall(
  engine: Engine,
  lane: Lane,
  cwd: string,
  what: readonly unknown[],
): LaneCall {
  return {
    lane,
    workspace: lane === 'exclusive' ? engine.lanes.workspaceOf(cwd) : undefined,
    fingerprint: JSON.stringify([...what, cwd]),
  };
}

/**
 * The operation already waiting to run the same call, if there is one: as it stands now, or, for a
 * call that blocks, once it has finished.
 */
export async function waitingTwin(
  engine: Engine,
  call: LaneCall,
  blocking: boolean,
  signal: AbortSignal,
): Promise<OperationSnapshot | undefined> {
  if (call.workspace === undefined) return undefined;
  const twin = engine.lanes.waitingWith(call.workspace, call.fingerprint);
  const [waiting] = twin === undefined ? [] : engine.operations.status([twin]);
  if (waiting === undefined || !blocking) return waiting;
  const [finished] = await engine.operations.await([waiting.id], undefined, signal);
  return finished ?? waiting;
}

/** `task`, run when the call's turn at its workspace comes. */
export function inLane(engine: Engine, call: LaneCall, task: OperationTask): OperationTask {
  const { workspace } = call;
  if (workspace === undefined) return task;
  return async (signal, id) => {
    // Entered at once (the task starts synchronously): the call's first answer says it waits.
    const ticket = engine.lanes.enter(workspace, id, call.fingerprint, signal);
    try {
      await ticket.turn;
      return await task(signal, id);
    } finally {
      // The task ends once its process tree has exited: the next writer's turn.
      ticket.release();
    }
  };
}
