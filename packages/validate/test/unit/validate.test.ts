// ahma-validate's validation, called in-process (test/support/validate.ts): every report, summary
// and exit status, from files alone. The availability checks, which run programs, are in
// test/system; the binary itself in test/e2e.
import { cp, mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixtures, tempDirs, upstreamFixture, validate } from '../support/validate.js';

const issueLine = /^(?<file>[^#]+)#(?<pointer>(\/[^:]*)?): (?<message>.+)$/;

const tempDir = tempDirs();

describe.concurrent('ahma-validate, in-process', () => {
  it('R5.1: a folder of valid definitions and its guidance file passes with exit 0', async () => {
    const run = await validate(['valid']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('✓ 3 files valid\n');
  });

  it("R5.2, SPEC §2 compat: the Rust ahma's files pass with warnings only: printed, marked, exit 0", async () => {
    const upstream = upstreamFixture('cargo-bench.json');
    const text = await validate([upstream]);
    expect(text.code).toBe(0);
    expect(text.stdout).toBe(
      `${upstream}#/subcommand/0/options/9/format: warning: format "path-or-value" has no effect (only "path" has an effect; this value is passed to the program as given)\n` +
        '✓ 1 file valid (1 warning)\n',
    );
    const json = await validate([upstream, '--format', 'json']);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as {
      valid: boolean;
      summary: { problems: number; warnings: number };
      files: { valid: boolean; issues: { severity: string; pointer: string }[] }[];
    };
    expect(report.valid).toBe(true);
    expect(report.summary).toEqual({ files: 1, invalid: 0, problems: 0, warnings: 1 });
    expect(report.files[0]?.valid).toBe(true);
    expect(report.files[0]?.issues.map((issue) => [issue.pointer, issue.severity])).toEqual([
      ['/subcommand/0/options/9/format', 'warning'],
    ]);
  });

  it('SPEC §2 compat: --strict makes warnings errors: the same file is invalid, exit 1', async () => {
    const upstream = upstreamFixture('cargo-bench.json');
    const text = await validate([upstream, '--strict']);
    expect(text.code).toBe(1);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines.at(-1)).toBe('✗ 1 problem in 1 of 1 file (1 warning, counted by --strict)');
    expect(lines[0]).toMatch(
      /#\/subcommand\/0\/options\/9\/format: warning: format "path-or-value"/,
    );
    const json = await validate([upstream, '--strict', '--format', 'json']);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as {
      valid: boolean;
      summary: Record<string, unknown>;
      files: { valid: boolean; issues: { severity: string }[] }[];
    };
    expect(report.valid).toBe(false);
    expect(report.summary).toEqual({
      files: 1,
      invalid: 1,
      problems: 1,
      warnings: 1,
      strict: true,
    });
    expect(report.files[0]?.valid).toBe(false);
    expect(report.files[0]?.issues.map((issue) => issue.severity)).toEqual(['warning']);
  });

  it('SPEC §2 compat: --strict changes nothing for files without warnings, exit 0', async () => {
    expect(await validate(['valid', '--strict'])).toMatchObject({
      code: 0,
      stdout: '✓ 3 files valid\n',
    });
  });

  it("SPEC §2 compat: a directory like upstream's .ahma/tools of December 2025 validates: its disabled file's sequence only warns", async () => {
    const december = upstreamFixture('ahma-tools-2025-12');
    const run = await validate([december]);
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.at(-1)).toBe('✓ 2 files valid (7 warnings)');
    expect(lines.slice(0, -1)).toHaveLength(7);
    for (const line of lines.slice(0, -1)) {
      expect(line).toMatch(
        /ahma_quality_check\.json#\/sequence\/\d\/tool: warning: step calls "cargo_\w+", which is not a defined, enabled tool \(check "tool" and "subcommand"; the tool is disabled, so the file still loads\)$/,
      );
    }
    expect((await validate([december, '--strict'])).code).toBe(1);
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
      warnings: 0,
    });
    expect(report.files[0]?.issues).toContainEqual({
      file: 'broken/typo.json',
      pointer: '/subcommand/0/descripton',
      message: 'unknown key "descripton"',
      hint: 'did you mean "description"?',
      severity: 'error',
    });
  });

  it('R1.2: with no target it validates .ahma/tools of the working directory', async () => {
    const project = await tempDir();
    await mkdir(join(project, '.ahma'));
    await cp(join(fixtures, 'valid'), join(project, '.ahma', 'tools'), { recursive: true });
    expect(await validate([], project)).toMatchObject({ code: 0, stdout: '✓ 3 files valid\n' });
  });

  it('R5.1, exit 2: a missing target is an I/O error', async () => {
    const run = await validate(['nowhere']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('ahma-validate: cannot read nowhere: no such file or directory\n');
  });

  it('R5.1, exit 2: an unreadable file in a named directory is an I/O error', async () => {
    const dir = await tempDir();
    await symlink(join(dir, 'missing-target'), join(dir, 'dangling.json'));
    const run = await validate([dir]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `cannot read ${join(dir, 'dangling.json')}: no such file or directory`,
    );
  });

  it('R5.1, exit 2: an unknown flag or format is a usage error with the usage text', async () => {
    for (const args of [
      ['--frmat', 'json'],
      ['--format', 'yaml'],
    ]) {
      const run = await validate(args);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('Usage: ahma-validate');
    }
  });

  it('R5.1: prints help and version', async () => {
    const help = (await validate(['--help'])).stdout;
    expect(help).toContain('Exit status: 0 all valid');
    expect(help).toContain('--strict');
    expect(help).toContain('1 any invalid');
    expect(help).toContain('3 all valid but an availability check failed');
    expect((await validate(['--version'])).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('§2 availability: without --check-availability no check runs and the report is unchanged', async () => {
    const run = await validate(['availability']);
    expect(run).toMatchObject({ code: 0, stdout: '✓ 4 files valid\n' });
    const json = await validate(['availability', '--format', 'json']);
    expect(JSON.parse(json.stdout)).not.toHaveProperty('availability');
  });
});
