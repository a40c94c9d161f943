// What the doctor's probes share: a bash script run in the doctor's scope through the engine
// (confined exactly as the server's commands), and the reading of what it printed.
import { stat } from 'node:fs/promises';
import type { Engine } from '@ahma/core';
import type { Workspace } from './workspace.js';

export interface ProbeContext {
  readonly engine: Engine;
  readonly workspace: Workspace;
  /** The process commands must not signal or trace: the server (the doctor itself). */
  readonly serverPid: number;
  readonly keepCapabilities: boolean;
  readonly signal?: AbortSignal | undefined;
}

export interface Ran {
  readonly exitCode: number | null;
  readonly output: string;
}

const PROBE_TIMEOUT_MS = 20_000;

/** Runs a bash script in the doctor's scope, confined as every command is. */
export async function sh(context: ProbeContext, script: string): Promise<Ran> {
  context.signal?.throwIfAborted();
  const result = await context.engine.executor.run({
    command: { kind: 'shell', script },
    cwd: context.workspace.scope,
    timeoutMs: PROBE_TIMEOUT_MS,
    signal: context.signal,
    logName: 'ahma-doctor',
  });
  context.signal?.throwIfAborted();
  return { exitCode: result.exitCode, output: result.output };
}

/** Single quotes for bash. */
export function q(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** `NAME=value` lines of a probe's output. */
export function fields(output: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const line of output.split('\n')) {
    const match = /^([A-Za-z_]+)[=:]\s*(.*)$/.exec(line);
    if (match?.[1] !== undefined && !found.has(match[1])) found.set(match[1], match[2] ?? '');
  }
  return found;
}

/** The error of a message such as `bash: line 1: /x: Permission denied`: `Permission denied`. */
export function reason(message: string | undefined): string {
  const line =
    (message ?? '')
      .split('\n')
      .map((each) => each.trim())
      .filter((each) => each !== '')
      .pop() ?? '';
  const tail = line.slice(line.lastIndexOf(': ') + 1).trim();
  return tail.slice(tail.lastIndexOf(' - ') + 1).replace(/^-\s*/, '') || 'no message';
}

export function plural(count: number, noun: string): string {
  return `${String(count)} ${noun}${count === 1 ? '' : 's'}`;
}

export async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

export function mechanismName(engine: Engine): string {
  const { mechanism } = engine.sandbox;
  return mechanism === 'landlock' ? 'Landlock' : mechanism === 'seatbelt' ? 'Seatbelt' : 'nothing';
}

/** A command creates a file in a directory outside every writable path. */
