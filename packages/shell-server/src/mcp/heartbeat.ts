// Progress heartbeats (SPEC §3, §12): while a call stays open (a synchronous command, the inline
// wait of an async one, `await`) and its request carried a progressToken, the client hears from the
// server at least every HEARTBEAT_INTERVAL_MS, so a client that resets its request timeout on
// progress keeps waiting. Heartbeats stop before the call's response: MCP ends a request's progress
// with its response, and the SDK clients report any later progress as an error.

/**
 * How often a heartbeat goes out: well inside the 10 s the specification promises, with room for a
 * busy event loop.
 */
export const HEARTBEAT_INTERVAL_MS = 5_000;

/** Sends one notifications/progress of the call being served (progress must grow each time). */
export type ProgressReporter = (progress: number, message: string) => void;

/**
 * Reports progress every `intervalMs` until the returned function is called; without a reporter
 * (the request asked for no progress) it does nothing.
 */
export function startHeartbeat(
  report: ProgressReporter | undefined,
  intervalMs: number,
  message: (elapsedSeconds: number) => string,
): () => void {
  if (report === undefined) return () => undefined;
  const started = performance.now();
  const timer = setInterval(() => {
    // Elapsed seconds grow strictly between ticks, as the progress value must.
    const elapsed = (performance.now() - started) / 1000;
    report(elapsed, message(Math.round(elapsed)));
  }, intervalMs);
  return () => clearInterval(timer);
}
