// The built ahma-validate binary, spawned for real: argv reaches runValidate, the exit status is
// the process's, and relative targets are read from the process's working directory. Everything
// else is checked in-process (test/unit, test/system).
import { execFile } from 'node:child_process';
import { cp, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { fixtures, tempDirs, type Run } from '../support/validate.js';

const bin = fileURLToPath(new URL('../../bin/ahma-validate.js', import.meta.url));
const tempDir = tempDirs();

/** Runs the built binary in `cwd`. */
async function validateBin(args: string[], cwd = fixtures): Promise<Run> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [bin, ...args], { cwd });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe.concurrent('the ahma-validate binary', () => {
  it('R1.2, R5.1: with no target it validates .ahma/tools of its working directory, exit 0', async () => {
    const project = await tempDir();
    await mkdir(join(project, '.ahma'));
    await cp(join(fixtures, 'valid'), join(project, '.ahma', 'tools'), { recursive: true });
    expect(await validateBin([], project)).toEqual({
      code: 0,
      stdout: '✓ 3 files valid\n',
      stderr: '',
    });
  });

  it('R5.2: a folder of broken definitions prints every problem, exit 1', async () => {
    const run = await validateBin(['broken']);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      'broken/typo.json#/subcommand/0/descripton: unknown key "descripton" (did you mean "description"?)\n',
    );
    expect(run.stdout).toMatch(/✗ 5 problems in 3 of 3 files\n$/);
  });

  it('R5.1: an unknown flag is a usage error, exit 2; --help exits 0', async () => {
    const usage = await validateBin(['--frmat', 'json']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('Usage: ahma-validate');
    const help = await validateBin(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: ahma-validate /);
  });
});
