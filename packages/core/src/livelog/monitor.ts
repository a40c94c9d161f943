// A livelog tool's operation (SPEC §2 Compatibility): the source command runs through the executor
// like every command (sandboxed, its own process group, stdin /dev/null, bounded output and log),
// while its output is read line by line, chunked and checked by the detector. An issue is raised
// as an alert of the operation at once, at most one per cooldown; an endpoint that fails is
// reported once and retried with the next chunks. Cancelling the operation kills the source's
// tree; the result is the source's, with a line counting what was checked and raised. Upstream
// ahma-labs' additions: the call's argv and env (start.ts), a clear run made once before the
// source through the same executor, and a prefilter deciding which lines are checked at all.
import type { LivelogSettings } from '../definition/livelog-settings.js';
import type { Logger } from '../logger.js';
import type { ExecutionResult } from '../process/execution-types.js';
import type { ExecutionRequest, Executor } from '../process/executor.js';
import { ChunkQueue } from './chunk-queue.js';
import { Chunker, MAX_CHUNK_CHARS } from './chunker.js';
import { DetectorError, type Detector } from './detector.js';
import { LineSplitter } from './lines.js';
import { Prefilter, type PrefilterCounts } from './prefilter.js';
import type { LivelogStart } from './start.js';

/** Chunks waiting for the endpoint at most; beyond, the oldest is dropped (and counted). */
export const MAX_PENDING_CHUNKS = 4;
/** The clear run is stopped after this long (upstream waits for it without a bound). */
export const CLEAR_TIMEOUT_MS = 30_000;

export interface LivelogRun {
  readonly executor: Executor;
  readonly settings: LivelogSettings;
  /** What this call runs (resolveLivelogStart). */
  readonly start: LivelogStart;
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
  /** Sees the clear run's result (the server audits it as it audits the source). */
  readonly onClear?: ((argv: readonly string[], result: ExecutionResult) => void) | undefined;
  /** R7.15, R7.16: the file's own network mode, for the source and the clear run. */
  readonly network?: ExecutionRequest['network'];
  /** R7.17: who runs them (the tool, the MCP connection), for the egress proxy. */
  readonly caller?: ExecutionRequest['caller'];
}

interface Counts {
  checked: number;
  issues: number;
  alerts: number;
  failed: number;
}

export async function runLivelog(run: LivelogRun): Promise<ExecutionResult> {
  const { settings, start } = run;
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
  // Upstream: only lines the prefilter matches are checked; the result keeps every line.
  const prefilter =
    settings.prefilter === undefined
      ? undefined
      : new Prefilter({
          pattern: settings.prefilter,
          onLine: (line) => chunker.add(line),
          onSwitchedOff: (reason) => {
            run.logger?.warn(`livelog ${run.logName}: prefilter_regex switched off: ${reason}`);
            run.alert(
              `livelog switched prefilter_regex off: ${reason}. Every line is checked from now on.`,
              '',
            );
          },
        });
  const feed = (found: string[]) => {
    if (prefilter !== undefined) prefilter.push(found);
    else for (const line of found) chunker.add(line);
  };

  const startedAt = Date.now();
  const cleared = await clearSource(run);
  // The clear run's time counts against the call's timeout.
  const timeoutMs =
    run.timeoutMs === undefined ? undefined : Math.max(run.timeoutMs - (Date.now() - startedAt), 1);
  let result: ExecutionResult;
  try {
    result = await run.executor.run({
      command: { kind: 'argv', argv: start.argv },
      cwd: run.cwd,
      env: start.env,
      network: run.network,
      caller: run.caller,
      timeoutMs,
      signal: run.signal,
      logName: run.logName,
      maxOutputTokens: run.maxOutputTokens,
      onOutput: (piece) => feed(lines.push(piece)),
    });
  } finally {
    feed(lines.end());
    // Lines still with the prefilter are decided first, unless the monitor was stopped.
    if (prefilter !== undefined && !run.signal.aborted) await prefilter.settled();
    prefilter?.stop();
    chunker.flush();
    // A source that ended by itself has its last chunks checked; a stopped one does not wait.
    if (run.signal.aborted) await queue.stop();
    else await queue.idle();
    run.signal.removeEventListener('abort', onAbort);
    clearTimeout(heldTimer);
  }
  const unraised = held?.count ?? 0;
  const separator = result.output === '' || result.output.endsWith('\n') ? '' : '\n';
  const summary = summaryLine(start, counts, queue.dropped, unraised, lastError, prefilter?.counts);
  return { ...result, output: `${result.output}${separator}${cleared}${summary}` };
}

/**
 * Upstream's clear run (`adb logcat -c`), once, before the source: the source command with
 * clear_command's arguments and the call's env, through the same executor (sandbox, process group,
 * cancel). Its output is not checked. Best effort, as upstream: a failure is said in the result
 * (the line returned) and the source starts anyway.
 */
async function clearSource(run: LivelogRun): Promise<string> {
  const argv = run.start.clearArgv;
  if (argv === undefined || run.signal.aborted) return '';
  const result = await run.executor.run({
    command: { kind: 'argv', argv },
    cwd: run.cwd,
    env: run.start.env,
    network: run.network,
    caller: run.caller,
    timeoutMs: Math.min(CLEAR_TIMEOUT_MS, run.timeoutMs ?? CLEAR_TIMEOUT_MS),
    signal: run.signal,
    logName: `${run.logName}-clear`,
    maxOutputTokens: 256,
  });
  run.onClear?.(argv, result);
  if (result.status === 'completed' || result.status === 'cancelled') return '';
  const how =
    result.status === 'timed_out'
      ? `did not end within ${String(CLEAR_TIMEOUT_MS / 1000)} s`
      : `failed (${result.exitCode === null ? `signal ${String(result.signal)}` : `exit ${String(result.exitCode)}`})`;
  // Its first words say what went wrong (the sandbox's explanation follows them).
  const said = result.output.replace(/\s+/g, ' ').trim();
  const excerpt = said.length > 300 ? `${said.slice(0, 300)}…` : said;
  run.logger?.warn(`livelog ${run.logName}: clear_command ${how}`);
  return `ahma livelog: clear_command (${argv.join(' ')}) ${how}${excerpt === '' ? '' : `: ${excerpt}`}; the source was started anyway\n`;
}

/** The last line of the result: what was checked and raised, and what was not. */
function summaryLine(
  start: LivelogStart,
  counts: Counts,
  dropped: number,
  unraised: number,
  lastError: string | undefined,
  prefiltered: PrefilterCounts | undefined,
): string {
  const n = (count: number, one: string, many = `${one}s`) =>
    `${String(count)} ${count === 1 ? one : many}`;
  const parts = [
    ...(prefiltered === undefined
      ? []
      : [
          `${String(prefiltered.passed)} of ${n(prefiltered.lines, 'line')} passed prefilter_regex`,
        ]),
    `${n(counts.checked, 'chunk')} checked by ${start.model} at ${start.baseUrl}`,
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
  if (prefiltered !== undefined && prefiltered.skipped > 0) {
    parts.push(`${n(prefiltered.skipped, 'line')} skipped unchecked (prefilter_regex was behind)`);
  }
  if (prefiltered?.switchedOff !== undefined) {
    parts.push(`prefilter_regex switched off (${prefiltered.switchedOff})`);
  }
  if (counts.failed > 0) {
    parts.push(
      `${n(counts.failed, 'chunk')} not checked: the endpoint failed (last: ${lastError ?? '?'})`,
    );
  }
  return `ahma livelog: ${parts.join('; ')}\n`;
}
