// A livelog tool's operation (SPEC §2 Compatibility): the source command runs through the executor
// like every command (sandboxed, its own process group, stdin /dev/null, bounded output and log),
// while its output is read line by line, chunked and checked by the detector. An issue is raised
// as an alert of the operation at once, at most one per cooldown; an endpoint that fails is
// reported once and retried with the next chunks. Cancelling the operation kills the source's
// tree; the result is the source's, with a line counting what was checked and raised.
import type { LivelogSettings } from '../definition/livelog-settings.js';
import type { Logger } from '../logger.js';
import type { ExecutionResult } from '../process/execution-types.js';
import type { Executor } from '../process/executor.js';
import { ChunkQueue } from './chunk-queue.js';
import { Chunker, MAX_CHUNK_CHARS } from './chunker.js';
import { DetectorError, type Detector } from './detector.js';
import { LineSplitter } from './lines.js';

/** Chunks waiting for the endpoint at most; beyond, the oldest is dropped (and counted). */
export const MAX_PENDING_CHUNKS = 4;

export interface LivelogRun {
  readonly executor: Executor;
  readonly settings: LivelogSettings;
  /** Real path of the working directory, inside the scope. */
  readonly cwd: string;
  /** Stop the source after this long; none by default (a monitor runs until cancelled). */
  readonly timeoutMs?: number | undefined;
  /** The operation's cancellation. */
  readonly signal: AbortSignal;
  /** The operation id (names the full-output log). */
  readonly logName: string;
  readonly detector: Detector;
  /** Raises an alert of the operation (OperationManager.alert, bound to its id). */
  readonly alert: (summary: string, detail: string) => void;
  readonly logger?: Logger | undefined;
  /** R15.2: the call's output budget (`max_output_tokens`); default the server's. */
  readonly maxOutputTokens?: number | undefined;
}

interface Counts {
  checked: number;
  issues: number;
  alerts: number;
  failed: number;
}

export async function runLivelog(run: LivelogRun): Promise<ExecutionResult> {
  const { settings } = run;
  const counts: Counts = { checked: 0, issues: 0, alerts: 0, failed: 0 };
  const cooldownMs = settings.cooldownSeconds * 1000;
  // Requests stop with the operation.
  const requests = new AbortController();
  const onAbort = () => requests.abort();
  run.signal.addEventListener('abort', onAbort, { once: true });

  let quietUntil = 0;
  let held: { summary: string; chunk: string; count: number } | undefined;
  let heldTimer: NodeJS.Timeout | undefined;
  let lastError: string | undefined;
  let errorReported = false;

  const raise = (summary: string, chunk: string) => {
    counts.alerts++;
    quietUntil = Date.now() + cooldownMs;
    run.alert(summary, chunk);
  };
  // Issues found during a cooldown are not lost: the latest is raised, with how many there were,
  // as soon as the cooldown ends.
  const raiseHeld = () => {
    heldTimer = undefined;
    if (held === undefined) return;
    const { summary, chunk, count } = held;
    held = undefined;
    raise(
      count === 1
        ? `${summary} (found during the alert cooldown)`
        : `${summary} (the latest of ${String(count)} issues found during the alert cooldown)`,
      chunk,
    );
  };

  const check = async (chunk: string) => {
    let verdict;
    try {
      verdict = await run.detector.check(chunk, requests.signal);
    } catch (error) {
      if (requests.signal.aborted) return;
      counts.failed++;
      lastError = error instanceof DetectorError ? error.message : String(error);
      // Reported once until the endpoint answers again: not one alert per chunk.
      if (!errorReported) {
        errorReported = true;
        run.logger?.warn(`livelog ${run.logName}: ${lastError}`);
        run.alert(
          `livelog cannot check the output: ${lastError}. The source keeps running; later chunks are retried, and this is reported again only after the endpoint has answered.`,
          chunk,
        );
      }
      return;
    }
    errorReported = false;
    counts.checked++;
    if (verdict.clean) return;
    counts.issues++;
    if (Date.now() >= quietUntil) {
      raise(verdict.summary, chunk);
      return;
    }
    held = { summary: verdict.summary, chunk, count: (held?.count ?? 0) + 1 };
    heldTimer ??= setTimeout(raiseHeld, Math.max(quietUntil - Date.now(), 0));
  };

  const queue = new ChunkQueue(MAX_PENDING_CHUNKS, check);
  const chunker = new Chunker({
    maxLines: settings.chunkMaxLines,
    maxSeconds: settings.chunkMaxSeconds,
    maxChars: MAX_CHUNK_CHARS,
    onChunk: (text) => queue.push(text),
  });
  const lines = new LineSplitter();

  let result: ExecutionResult;
  try {
    result = await run.executor.run({
      command: { kind: 'argv', argv: [settings.sourceCommand, ...settings.sourceArgs] },
      cwd: run.cwd,
      timeoutMs: run.timeoutMs,
      signal: run.signal,
      logName: run.logName,
      maxOutputTokens: run.maxOutputTokens,
      onOutput: (piece) => {
        for (const line of lines.push(piece)) chunker.add(line);
      },
    });
  } finally {
    for (const line of lines.end()) chunker.add(line);
    chunker.flush();
    // A source that ended by itself has its last chunks checked; a stopped one does not wait.
    if (run.signal.aborted) await queue.stop();
    else await queue.idle();
    run.signal.removeEventListener('abort', onAbort);
    clearTimeout(heldTimer);
  }
  const unraised = held?.count ?? 0;
  const separator = result.output === '' || result.output.endsWith('\n') ? '' : '\n';
  return {
    ...result,
    output: `${result.output}${separator}${summaryLine(settings, counts, queue.dropped, unraised, lastError)}`,
  };
}

/** The last line of the result: what was checked and raised, and what was not. */
function summaryLine(
  settings: LivelogSettings,
  counts: Counts,
  dropped: number,
  unraised: number,
  lastError: string | undefined,
): string {
  const n = (count: number, one: string, many = `${one}s`) =>
    `${String(count)} ${count === 1 ? one : many}`;
  const parts = [
    `${n(counts.checked, 'chunk')} checked by ${settings.model} at ${settings.baseUrl}`,
    `${n(counts.issues, 'issue')} found`,
    `${n(counts.alerts, 'alert')} raised`,
  ];
  if (unraised > 0) {
    parts.push(`${n(unraised, 'issue')} found during the last cooldown not raised`);
  }
  if (dropped > 0) {
    parts.push(
      `${n(dropped, 'chunk')} dropped unchecked (the endpoint was slower than the source)`,
    );
  }
  if (counts.failed > 0) {
    parts.push(
      `${n(counts.failed, 'chunk')} not checked: the endpoint failed (last: ${lastError ?? '?'})`,
    );
  }
  return `ahma livelog: ${parts.join('; ')}\n`;
}
