// Why an isolated session ends by itself, and what its client hears from then on. The rule: a
// session that ended answers every open and later request with one error naming the cause and
// saying to start a new session; the code says whose side the cause is on: -32603 when the
// session's process failed (the server's side), -32600 when the client's roots cannot give a scope
// or changed after the scope was locked (the client's side).
import { RpcCode } from '../jsonrpc/codes.js';

export type TerminationReason = 'roots_changed' | 'child_failed' | 'invalid_root';

/** How a session ends: the reason it reports, and the text every request gets from then on. */
export interface Ending {
  readonly reason: TerminationReason;
  readonly message: string;
}

/** The JSON-RPC error code of the requests a session refuses once it ended for `reason`. */
export function refusalCode(reason: TerminationReason): number {
  return reason === 'child_failed' ? RpcCode.InternalError : RpcCode.InvalidRequest;
}

/**
 * The client's first root is no usable directory, or the server's root policy refuses it: falling
 * back to the default scope would run the client's commands in a tree it did not name.
 */
export function invalidRoot(why: string): Ending {
  return {
    reason: 'invalid_root',
    message: `this session cannot start: ${why}. A session's sandbox scope is its client's first root, which must be an existing directory within the server's allowed roots`,
  };
}

/** The client's roots changed after the lock: a session's scope never changes (R8D.12). */
export function rootsChanged(scope: string): Ending {
  return {
    reason: 'roots_changed',
    message: `this session was ended: its client's roots changed after its sandbox scope was locked to ${scope}, and a session's scope never changes; start a new session`,
  };
}

/** A new process refused the replayed initialize: it cannot serve the session. */
export function initializeRefused(why: string): Ending {
  return {
    reason: 'child_failed',
    message: `this session cannot continue: its server process refused the session's initialize (${why}); start a new session`,
  };
}

/** A new process did not answer the replayed initialize in time: it is taken for broken. */
export function initializeUnanswered(timeoutMs: number): Ending {
  return {
    reason: 'child_failed',
    message: `this session cannot continue: its server process did not answer initialize within ${String(timeoutMs / 1000)} s; start a new session`,
  };
}

/** The process died again within the restart window (restart-policy.ts): no third try. */
export function diedAgain(exit: string): Ending {
  return {
    reason: 'child_failed',
    message: `the session's server process exited (${exit}) again soon after a restart; this session cannot continue: start a new session`,
  };
}
