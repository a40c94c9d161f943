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

/**
 * Sends one notifications/progress of the call being served (progress must grow each time);
 * resolves once it has been handed to the transport.
 */
export type ProgressReporter = (progress: number, message: string) => Promise<void>;

/**
 * How long after a heartbeat the call's response is held back. The TypeScript SDK client handles a
 * notification a microtask after reading it but a response at once: a progress notification read
 * in the same chunk as its response finds its token already forgotten ("unknown token"). Spacing
 * the two keeps them in separate reads. It only delays a response that comes right after a
 * heartbeat, which happens at most once per interval.
 */
export const RESPONSE_SPACING_MS = 100;

/**
 * Reports progress every `intervalMs` until the returned function is called; without a reporter
 * (the request asked for no progress) it does nothing. Stopping resolves once the last heartbeat
 * has reached the transport and RESPONSE_SPACING_MS have passed since it: the caller answers only
 * then, so no progress follows the response, nor shares its read.
 */
export function startHeartbeat(
  report: ProgressReporter | undefined,
  intervalMs: number,
  message: (elapsedSeconds: number) => string,
): () => Promise<void> {
  if (report === undefined) return () => Promise.resolve();
  const started = performance.now();
  let last: Promise<void> = Promise.resolve();
  let lastAt = -Infinity;
  const timer = setInterval(() => {
    // Elapsed seconds grow strictly between ticks, as the progress value must.
    const elapsed = (performance.now() - started) / 1000;
    lastAt = performance.now();
    last = report(elapsed, message(Math.round(elapsed)));
  }, intervalMs);
  return async () => {
    clearInterval(timer);
    await last;
    const wait = lastAt + RESPONSE_SPACING_MS - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  };
}
