// Availability probes (SPEC §2 availability_check): a command line run once, confined like any
// command, or a program only looked up on PATH; and what it found. The definition layer decides
// which probes a file declares and what their outcomes mean for its tools.
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { AhmaError } from '../errors.js';
import type { Executor } from './executor.js';

/** How much of a probe's output is kept. */
const OUTPUT_BYTES = 1024;

/** One probe: `probe` runs `argv`; `lookup` only looks its program up on PATH, never running it. */
export interface ProbeLine {
  readonly argv: readonly string[];
  readonly kind: 'probe' | 'lookup';
}

/** What running one distinct command line found, shared by every check that declares it. */
export interface ProbeOutcome {
  readonly kind: 'not_found' | 'exited' | 'timed_out' | 'error';
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly message: string | undefined;
  readonly output: string;
  readonly durationMs: number;
}

export interface ProbeSettings {
  readonly executor: Executor;
  readonly cwd: string;
  readonly timeoutMs: number;
}

/** Runs `work` over `items` with at most `limit` in flight; results in input order. */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Runs one probe through the executor: confined, stdin /dev/null, its own session and process
 * group, the whole tree ended on timeout; its output kept only up to 1 KiB. A missing executable
 * is found before anything runs, so "not found" reads the same whatever the sandbox reports.
 */
export async function runProbe(
  check: ProbeLine,
  index: number,
  settings: ProbeSettings,
): Promise<ProbeOutcome> {
  const { argv } = check;
  const started = performance.now();
  const command = argv[0] ?? '';
  if (!(await findExecutable(command, settings.executor.env['PATH'], settings.cwd))) {
    return outcome('not_found', started, {});
  }
  if (check.kind === 'lookup') return outcome('exited', started, { exitCode: 0 });
  let result;
  try {
    result = await settings.executor.run({
      command: { kind: 'argv', argv },
      cwd: settings.cwd,
      timeoutMs: settings.timeoutMs,
      logName: `availability-${String(process.pid)}-${String(index)}`,
    });
  } catch (error) {
    if (!(error instanceof AhmaError)) throw error;
    return outcome('error', started, { message: error.message });
  }
  const output = result.output.slice(0, OUTPUT_BYTES).trim();
  if (result.status === 'timed_out') return outcome('timed_out', started, { output });
  // Neither an exit code nor a signal: the command never ran (the executor says why last).
  if (result.exitCode === null && result.signal === null) {
    return outcome('error', started, { message: result.output.trim().split('\n').at(-1) ?? '' });
  }
  return outcome('exited', started, { exitCode: result.exitCode, signal: result.signal, output });
}

function outcome(
  kind: ProbeOutcome['kind'],
  started: number,
  details: {
    exitCode?: number | null;
    signal?: NodeJS.Signals | null;
    message?: string;
    output?: string;
  },
): ProbeOutcome {
  return {
    kind,
    exitCode: details.exitCode ?? null,
    signal: details.signal ?? null,
    message: details.message,
    output: details.output ?? '',
    durationMs: performance.now() - started,
  };
}

/** Whether `command` names an executable file, looked up on PATH as execvp does. */
export async function findExecutable(
  command: string,
  path: string | undefined,
  cwd: string,
): Promise<boolean> {
  if (command === '') return false;
  if (command.includes('/')) return isExecutableFile(resolve(cwd, command));
  // An empty PATH entry means the working directory; execvp's default path when PATH is unset.
  for (const dir of (path ?? '/bin:/usr/bin').split(':')) {
    if (await isExecutableFile(resolve(cwd, dir === '' ? '.' : dir, command))) return true;
  }
  return false;
}

async function isExecutableFile(file: string): Promise<boolean> {
  try {
    if (!(await stat(file)).isFile()) return false;
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
