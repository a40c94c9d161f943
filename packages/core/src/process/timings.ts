// How long the server waits at each step of stopping a command, in one place: each wait has a
// rule (below) and a default. Tests pass shorter ones (EngineOptions.timings) instead of waiting.
//
// Stopping a command (a timeout, a cancel): SIGTERM to its tree; after `graceMs` the sandbox helper
// sends SIGKILL itself; `backstopSlackMs` later the server sends SIGKILL (to a helper that could
// not); `watchdogMs` after that it kills the processes itself (a helper or zygote that does not
// answer at all, R7.6), and a pooled command's zygote gets `zygoteAnswerMs` to report the end
// before it is taken for wedged and restarted.

export interface Timings {
  /**
   * Between SIGTERM and SIGKILL for a stopped command's tree: time for a program to clean up
   * (remove lock files, flush) before it is killed. The helper applies it (--grace-ms).
   */
  readonly graceMs: number;
  /**
   * After the grace, before the server's own SIGKILL: the helper escalates at `graceMs` and needs
   * a moment to reap the tree; a helper that works must always end first, or the server's SIGKILL
   * would orphan what ignores SIGTERM.
   */
  readonly backstopSlackMs: number;
  /**
   * After the server's SIGKILL, before it kills the processes itself (R7.6): long enough for the
   * helper or zygote to reap a big tree, short enough that a stopped one cannot hold a command
   * much past its timeout.
   */
  readonly watchdogMs: number;
  /**
   * After the watchdog killed a pooled command's tree: the zygote's time to report that end (its
   * X frame). No answer means it is wedged (stopped, say): it and its commands are killed and a
   * new one starts.
   */
  readonly zygoteAnswerMs: number;
  /**
   * Closing the pool: the zygote's time to stop its warm shells and exit once its input ends,
   * before it gets SIGTERM.
   */
  readonly zygoteStopMs: number;
  /**
   * After a directly spawned helper exited, before its output pipes are closed from our side: it
   * exits only once its tree is gone, so they close at once; a stray descriptor still holding one
   * open must not keep the result waiting.
   */
  readonly pipeCloseMs: number;
  /**
   * How often an interactive command's idle time is checked (at most; a shorter idle limit is
   * checked at its own pace): it ends within this much of its limit.
   */
  readonly idleCheckMs: number;
}

export const DEFAULT_TIMINGS: Timings = {
  graceMs: 2000,
  backstopSlackMs: 1000,
  watchdogMs: 2000,
  zygoteAnswerMs: 1000,
  zygoteStopMs: 5000,
  pipeCloseMs: 1000,
  idleCheckMs: 1000,
};

/** The defaults with `overrides` applied. */
export function withDefaults(overrides: Partial<Timings> | undefined): Timings {
  return { ...DEFAULT_TIMINGS, ...overrides };
}
