// Running a sequence (SPEC §9, R6.1–R6.3): steps strictly one after another, `step_delay_ms` apart,
// each under its own timeout and all under the sequence's overall one. The first step that does not
// complete stops the rest. The result is one execution result whose output is the transcript of
// every step, and whose `steps` carry each step's record.
import { setTimeout as delay } from 'node:timers/promises';
import { AhmaError } from '../errors.js';
import type {
  Command,
  ExecutionResult,
  ExecutionStatus,
  StepRecord,
  StepStatus,
} from '../process/execution-types.js';
import type { ExecutionRequest, Executor } from '../process/executor.js';
import { OutputCollector } from '../process/output.js';
import { timerDelay } from '../process/timer.js';

/** One step, prepared only when its turn comes (path checks, file_arg temp files). */
export interface StepPlan {
  /** What the transcript calls it: the tool it runs, and the author's description if any. */
  readonly label: string;
  /** Throws an AhmaError when the step's call is refused (a path outside the scope, …). */
  prepare(): Promise<PreparedStep>;
}

export interface PreparedStep {
  readonly command: Command;
  /** For the transcript and the audit log. */
  readonly argv: readonly string[];
  readonly cwd: string;
  /** The step's own timeout; undefined: only the sequence's. */
  readonly timeoutMs: number | undefined;
  cleanup(): Promise<void>;
}

export interface SequenceOptions {
  readonly executor: Executor;
  /** Pause between steps (step_delay_ms). */
  readonly delayMs: number;
  /** The whole sequence's time limit; undefined: none. */
  readonly timeoutMs: number | undefined;
  /** Cancels the sequence: the running step is killed and no further step starts. */
  readonly signal: AbortSignal;
  /** Base name of the steps' full-output logs (the operation id). */
  readonly logName: string;
  /** Called after every step that ran (the audit log). */
  readonly onStep?: (record: StepRecord) => void;
  /** Every piece of the running step's output, as it comes (progress heartbeats). */
  readonly onOutput?: ((chunk: Buffer) => void) | undefined;
  /** Who runs the steps (the sequence tool, its connection), as ExecutionRequest.caller. */
  readonly caller?: ExecutionRequest['caller'];
  /** R15.2: the call's output budget (`max_output_tokens`), for each step and the transcript. */
  readonly maxOutputTokens?: number | undefined;
  /** Workspace lanes: a read_only sequence's steps may not write the scope (ExecutionRequest). */
  readonly readOnly?: boolean | undefined;
}

export async function runSequence(
  plans: readonly StepPlan[],
  options: SequenceOptions,
): Promise<ExecutionResult> {
  const started = performance.now();
  const records: StepRecord[] = [];
  // One signal for the steps: the caller's cancel, or the sequence's own timeout.
  const stop = new AbortController();
  let timedOut = false;
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          stop.abort();
        }, timerDelay(options.timeoutMs));
  const onCancel = () => stop.abort();
  options.signal.addEventListener('abort', onCancel, { once: true });
  if (options.signal.aborted) stop.abort();

  try {
    for (const [index, plan] of plans.entries()) {
      const last = records.at(-1);
      if (last !== undefined && last.status !== 'completed') break;
      if (index > 0 && options.delayMs > 0) {
        await delay(options.delayMs, undefined, { signal: stop.signal }).catch(() => undefined);
      }
      if (stop.signal.aborted) {
        records.push(notRun(index, plan, timedOut ? 'timed_out' : 'cancelled'));
        break;
      }
      const record = await runStep(index, plan, options, stop.signal, () => timedOut);
      records.push(record);
      if (record.status !== 'refused') options.onStep?.(record);
    }
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener('abort', onCancel);
  }
  for (let index = records.length; index < plans.length; index++) {
    const plan = plans[index];
    if (plan !== undefined) records.push(notRun(index, plan, 'not_run'));
  }

  const stopper = records.find((record) => record.status !== 'completed');
  const status: ExecutionStatus =
    stopper === undefined
      ? 'completed'
      : stopper.status === 'timed_out' || stopper.status === 'cancelled'
        ? stopper.status
        : 'failed';
  // The transcript is bounded like one command's output (each step's is already): past the
  // budget its middle is elided and the whole of it is in the log file named in the marker.
  const collector = new OutputCollector(
    options.executor.limits,
    options.logName,
    options.maxOutputTokens,
  );
  collector.push(Buffer.from(transcript(records)));
  const collected = await collector.finish(status);
  return {
    status,
    exitCode: stopper === undefined ? 0 : stopper.exitCode,
    signal: null,
    output: collected.output,
    truncated: collected.truncated || records.some((record) => record.truncated),
    fullOutputPath: collected.fullOutputPath,
    durationMs: performance.now() - started,
    steps: records,
  };
}

async function runStep(
  index: number,
  plan: StepPlan,
  options: SequenceOptions,
  signal: AbortSignal,
  sequenceTimedOut: () => boolean,
): Promise<StepRecord> {
  let prepared: PreparedStep;
  try {
    prepared = await plan.prepare();
  } catch (error) {
    if (!(error instanceof AhmaError)) throw error;
    return { ...notRun(index, plan, 'refused'), output: `${error.message}\n` };
  }
  const startedAt = new Date();
  try {
    let result: ExecutionResult;
    try {
      result = await options.executor.run({
        command: prepared.command,
        cwd: prepared.cwd,
        timeoutMs: prepared.timeoutMs,
        signal,
        logName: `${options.logName}-step${String(index + 1)}`,
        onOutput: options.onOutput,
        caller: options.caller,
        maxOutputTokens: options.maxOutputTokens,
        readOnly: options.readOnly,
      });
    } catch (error) {
      // Refused by the executor (an argument with a NUL byte): the transcript goes on.
      if (!(error instanceof AhmaError)) throw error;
      return { ...notRun(index, plan, 'refused'), output: `${error.message}\n` };
    }
    return {
      step: index + 1,
      label: plan.label,
      argv: prepared.argv,
      command: prepared.command,
      cwd: prepared.cwd,
      // Killed because the whole sequence ran out of time: that is a timeout, not a cancel.
      status: result.status === 'cancelled' && sequenceTimedOut() ? 'timed_out' : result.status,
      exitCode: result.exitCode,
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      durationMs: result.durationMs,
      output: result.output,
      truncated: result.truncated,
      fullOutputPath: result.fullOutputPath,
    };
  } finally {
    await prepared.cleanup();
  }
}

function notRun(index: number, plan: StepPlan, status: StepStatus): StepRecord {
  return {
    step: index + 1,
    label: plan.label,
    argv: [],
    command: undefined,
    cwd: undefined,
    status,
    exitCode: null,
    startedAt: undefined,
    finishedAt: undefined,
    durationMs: 0,
    output: '',
    truncated: false,
    fullOutputPath: undefined,
  };
}

/** Every step: a header line with its outcome, then its output. */
function transcript(records: readonly StepRecord[]): string {
  const total = String(records.length);
  return records
    .map((record) => {
      const head = `── step ${String(record.step)}/${total}: ${record.label}`;
      if (record.startedAt === undefined) {
        const why =
          record.status === 'refused'
            ? 'refused'
            : record.status === 'not_run'
              ? 'not run (an earlier step did not complete)'
              : `not run (the sequence was ${record.status === 'timed_out' ? 'timed out' : 'cancelled'})`;
        return `${head} — ${why}\n${record.output}`;
      }
      const exit = record.exitCode === null ? '' : `, exit ${String(record.exitCode)}`;
      const how = `${record.status}${exit}, ${String(Math.round(record.durationMs))} ms`;
      const body = record.output === '' ? '(no output)\n' : record.output;
      return `${head} — ${how}\n$ ${record.argv.map(shellWord).join(' ')}\n${body.endsWith('\n') ? body : `${body}\n`}`;
    })
    .join('\n');
}

/** A word as a reader would type it in a shell (for the transcript only; nothing runs it). */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
