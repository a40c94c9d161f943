// Runs ahma-validate in this process: the same runValidate the binary calls, with the working
// directory, the environment and both output streams passed in instead of taken from the process.
// The binary itself is spawned only by test/e2e, which checks what this cannot: argv, the exit
// status and the real working directory of a process.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { runValidate } from '../../src/run.js';

export const fixtures = fileURLToPath(new URL('../fixtures', import.meta.url));

/** The Rust ahma's files, kept in core's fixtures. */
export const upstreamFixture = (name: string): string =>
  fileURLToPath(new URL(`../../../core/test/fixtures/upstream-round2/${name}`, import.meta.url));

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** ahma-validate ARGS in `cwd`, with `env`; what it printed and its exit status. */
export async function validate(
  args: string[],
  cwd = fixtures,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runValidate(args, {
    cwd,
    env,
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

/** A fresh temp directory, removed after the file's tests. */
export function tempDirs(): (prefix?: string) => Promise<string> {
  const made: string[] = [];
  afterAll(() => Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true }))));
  return async (prefix = join(tmpdir(), 'ahma-validate-')) => {
    const dir = await mkdtemp(prefix);
    made.push(dir);
    return dir;
  };
}
