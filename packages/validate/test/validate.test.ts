import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../bin/ahma-validate.js', import.meta.url));
const fixtures = fileURLToPath(new URL('./fixtures', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built ahma-validate binary for real. */
async function validate(args: string[], cwd = fixtures): Promise<Run> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [bin, ...args], { cwd });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const issueLine = /^(?<file>[^#]+)#(?<pointer>(\/[^:]*)?): (?<message>.+)$/;

/** Temp directories made by these tests, removed afterwards. */
const made: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ahma-validate-'));
  made.push(dir);
  return dir;
}
afterAll(() => Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true }))));

describe('ahma-validate', () => {
  it('R5.1: a folder of valid definitions and its guidance file passes with exit 0', async () => {
    const run = await validate(['valid']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('✓ 3 files valid\n');
  });

  it('R5.2: reports every problem of a folder of broken definitions in one run, exit 1', async () => {
    const run = await validate(['broken']);
    expect(run.code).toBe(1);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.pop()).toBe('✗ 5 problems in 3 of 3 files');
    for (const line of lines) expect(line).toMatch(issueLine);
    expect(lines).toEqual([
      'broken/steps.json#/sequence/0/tool: step calls "mkae", which is not a defined, enabled tool (check "tool" and "subcommand")',
      'broken/syntax.json#: invalid JSON at line 4, column 1: property name expected (keys are double-quoted strings; no trailing comma)',
      'broken/typo.json#/timeout_seconds: 0 is out of range (must be ≥ 1)',
      'broken/typo.json#/subcommand/0/description: missing required key "description" (What it does, written for the AI agent that will call it.)',
      'broken/typo.json#/subcommand/0/descripton: unknown key "descripton" (did you mean "description"?)',
    ]);
  });

  it('R5.2: a step may call a tool defined in a sibling file even when only one file is named', async () => {
    const run = await validate(['valid/check.json']);
    expect(run).toMatchObject({ code: 0, stdout: '✓ 1 file valid\n' });
  });

  it('R5.1: --format json gives a machine-readable report with pointers and hints', async () => {
    const run = await validate(['broken/typo.json', '--format', 'json']);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as {
      valid: boolean;
      summary: { files: number; invalid: number; problems: number };
      files: { file: string; valid: boolean; issues: { pointer: string; hint?: string }[] }[];
    };
    expect(report.valid).toBe(false);
    expect(report.summary).toEqual({
      files: 1,
      invalid: 1,
      problems: report.files[0]?.issues.length,
    });
    expect(report.files[0]?.issues).toContainEqual({
      file: 'broken/typo.json',
      pointer: '/subcommand/0/descripton',
      message: 'unknown key "descripton"',
      hint: 'did you mean "description"?',
    });
  });

  it('R1.2: with no target it validates .ahma/tools of the working directory', async () => {
    const project = await tempDir();
    await mkdir(join(project, '.ahma'));
    await cp(join(fixtures, 'valid'), join(project, '.ahma', 'tools'), { recursive: true });
    expect(await validate([], project)).toMatchObject({ code: 0, stdout: '✓ 3 files valid\n' });
  });

  it('exit 2: a missing target is an I/O error', async () => {
    const run = await validate(['nowhere']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('ahma-validate: cannot read nowhere: no such file or directory\n');
  });

  it('exit 2: an unreadable file in a named directory is an I/O error', async () => {
    const dir = await tempDir();
    await symlink(join(dir, 'missing-target'), join(dir, 'dangling.json'));
    const run = await validate([dir]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `cannot read ${join(dir, 'dangling.json')}: no such file or directory`,
    );
  });

  it('exit 2: an unknown flag or format is a usage error with the usage text', async () => {
    for (const args of [
      ['--frmat', 'json'],
      ['--format', 'yaml'],
    ]) {
      const run = await validate(args);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('Usage: ahma-validate');
    }
  });

  it('prints help and version', async () => {
    expect((await validate(['--help'])).stdout).toContain(
      'Exit status: 0 all valid, 1 any invalid',
    );
    expect((await validate(['--version'])).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});
