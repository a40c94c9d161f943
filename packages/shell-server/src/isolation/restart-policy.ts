// What an isolated session does when its process exits unasked (R8.5). The rule: the process is
// started again on the same scope and the session goes on, once; dying again within the restart
// window of the last crash ends the session (termination.ts: diedAgain). Of the requests the dead
// process was serving, a tools/call is answered with an error, since whether its command ran is
// unknown and running it twice could do harm; every other request (reads, settings) is safe to
// ask the new process again.
import type { JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { errorResponse, type ErrorResponse } from '../jsonrpc/incoming.js';
import type { ChildExit } from './child.js';
import type { Phase } from './handshake.js';

export const DEFAULT_RESTART_WINDOW_MS = 30_000;

/** Remembers the last crash, to tell a crash to recover from from one in a crash loop. */
export class CrashWindow {
  readonly #windowMs: number;
  #lastCrashAt: number | undefined;

  constructor(windowMs: number = DEFAULT_RESTART_WINDOW_MS) {
    this.#windowMs = windowMs;
  }

  /** A crash at `now` (ms): `restart` (remembered as the last one), or `end` when too soon. */
  crashed(now: number): 'restart' | 'end' {
    if (this.#lastCrashAt !== undefined && now - this.#lastCrashAt < this.#windowMs) return 'end';
    this.#lastCrashAt = now;
    return 'restart';
  }
}

/**
 * What replaces a process that crashed in `phase`: the session's one process runs only once the
 * scope is locked, so a crash then restarts the session on its scope (`restart_on_scope`); a
 * process heard before the lock or after the end is no one's (`none`).
 */
export type AfterCrash = 'restart_on_scope' | 'none';

export function afterCrash(phase: Phase): AfterCrash {
  return phase === 'starting' || phase === 'ready' ? 'restart_on_scope' : 'none';
}

/** The dead process's open requests: the calls that fail, and the requests sent again, in order. */
export function splitOpenRequests(open: readonly JSONRPCRequest[]): {
  readonly failed: readonly JSONRPCRequest[];
  readonly resent: readonly JSONRPCRequest[];
} {
  return {
    failed: open.filter((request) => request.method === 'tools/call'),
    resent: open.filter((request) => request.method !== 'tools/call'),
  };
}

/** The answer a call the dead process was running gets: `exit` is describeExit's. */
export function callLost(request: JSONRPCRequest, exit: string): ErrorResponse {
  return errorResponse(
    request.id,
    RpcCode.InternalError,
    `the session's server process exited while this call ran (${exit}); it was restarted on the same scope, but whether the command ran is unknown`,
  );
}

/** How a process ended, with its last stderr line when it left one, for the log and the errors. */
export function describeExit(exit: ChildExit, lastWords: string | undefined): string {
  const how =
    exit.error !== undefined
      ? `it could not be started: ${exit.error.message}`
      : exit.signal !== null
        ? `killed by ${exit.signal}`
        : `exit code ${String(exit.code)}`;
  return lastWords === undefined ? how : `${how}; it said: ${lastWords}`;
}
