// Shared fixtures for the execution-engine tests: scopes and state directories outside /tmp (the
// temp dir is writable by design, so a write landing there would prove nothing about the scope),
// engines without the shell pool, and /proc scans that find a test's processes by a unique marker.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { createEngine, type Engine, type EngineOptions } from '../../src/engine.js';
import type { Command, ExecutionResult } from '../../src/process/execution-types.js';
import type { ExecutionRequest } from '../../src/process/executor.js';
import { procStat } from '../../src/process/proc-stat.js';
import { quote, sleep } from './sandbox-helper.js';

/** A fresh directory under /var/tmp (real path), outside the temp dir the sandbox grants. */
export async function varTmpDir(label = 'dir'): Promise<string> {
  return realpath(await mkdtemp(`/var/tmp/ahma-eng-${label}-`));
}

export async function removeAll(paths: readonly (string | undefined)[]): Promise<void> {
  await Promise.all(
    paths.map((path) =>
      path === undefined ? undefined : rm(path, { recursive: true, force: true }),
    ),
  );
}

/** An engine over a fresh scope, without the shell pool (that is tested elsewhere). */
export interface EngineFixture {
  readonly scope: string;
  readonly stateDir: string;
  readonly engine: Engine;
  dispose(): Promise<void>;
}

export async function engineFixture(
  options: Omit<Partial<EngineOptions>, 'scope' | 'stateDir'> = {},
): Promise<EngineFixture> {
  const scope = await varTmpDir('scope');
  const stateDir = await varTmpDir('state');
  const engine = await createEngine({ noShellPool: true, ...options, scope, stateDir });
  return {
    scope,
    stateDir,
    engine,
    dispose: async () => {
      await engine.close();
      await removeAll([scope, stateDir]);
    },
  };
}

let logCounter = 0;

/** Runs a command (argv words, or a Command) in the engine, by default in its scope. */
export function run(
  engine: Engine,
  command: Command | readonly string[],
  request: Partial<Omit<ExecutionRequest, 'command'>> = {},
): Promise<ExecutionResult> {
  return engine.executor.run({
    command: isArgv(command) ? { kind: 'argv', argv: command } : command,
    cwd: request.cwd ?? engine.sandbox.scope,
    logName: request.logName ?? `test-${String(process.pid)}-${String(++logCounter)}`,
    ...(request.timeoutMs === undefined ? {} : { timeoutMs: request.timeoutMs }),
    ...(request.signal === undefined ? {} : { signal: request.signal }),
  });
}

function isArgv(command: Command | readonly string[]): command is readonly string[] {
  return Array.isArray(command);
}

/** `bash -c SCRIPT` as argv words (no startup files). */
export const bash = (script: string): string[] => ['bash', '--noprofile', '--norc', '-c', script];

/** /proc/PID/stat as the server reads it; quoting for bash and sleeping as the helper tests do. */
export { procStat, quote, sleep };

/** A unique argv[0] for a test's processes: `exec -a MARKER-role cmd`. */
export const newMarker = (): string => `ahma-mark-${randomBytes(6).toString('hex')}`;

export interface ProcessId {
  readonly pid: number;
  /** /proc/PID/stat starttime: tells a reused pid from the original process. */
  readonly start: string;
}

/** Live processes whose argv[0] starts with the marker (zombies have no cmdline, see survivors). */
export function markedProcesses(marker: string): ProcessId[] {
  const found: ProcessId[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let argv0: string;
    try {
      argv0 = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0')[0] ?? '';
    } catch {
      continue; // exited while we looked
    }
    if (!argv0.startsWith(marker)) continue;
    const stat = procStat(Number(name));
    if (stat !== undefined) found.push({ pid: Number(name), start: stat.start });
  }
  return found;
}

/** Polls until at least `count` marked processes run; returns them. */
export async function waitForMarked(
  marker: string,
  count = 1,
  timeoutMs = 5000,
): Promise<ProcessId[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = markedProcesses(marker);
    if (found.length >= count) return found;
    if (Date.now() > deadline) {
      throw new Error(
        `expected ${String(count)} process(es) marked ${marker}, saw ${String(found.length)}`,
      );
    }
    await sleep(20);
  }
}

/**
 * Which of the processes seen earlier still exist, zombies included (same pid and start time):
 * an empty list means every one of them is gone and reaped.
 */
export function survivors(seen: readonly ProcessId[]): { pid: number; state: string }[] {
  return seen.flatMap(({ pid, start }) => {
    const stat = procStat(pid);
    return stat === undefined || stat.start !== start ? [] : [{ pid, state: stat.state }];
  });
}

/** Polls a condition until it holds or the timeout passes; returns whether it held. */
export async function eventually(condition: () => boolean, timeoutMs = 3000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

export { refusal } from './refusal.js';
