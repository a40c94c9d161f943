import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
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
async function validate(
  args: string[],
  cwd = fixtures,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Run> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [bin, ...args], {
      cwd,
      env,
    });
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

  it("R5.2, SPEC §2 compat: the Rust ahma's files pass with warnings only: printed, marked, exit 0", async () => {
    const upstream = fileURLToPath(
      new URL('../../core/test/fixtures/upstream-round2/cargo-bench.json', import.meta.url),
    );
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
    const upstream = fileURLToPath(
      new URL('../../core/test/fixtures/upstream-round2/cargo-bench.json', import.meta.url),
    );
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
    const december = fileURLToPath(
      new URL('../../core/test/fixtures/upstream-round2/ahma-tools-2025-12', import.meta.url),
    );
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
    const help = (await validate(['--help'])).stdout;
    expect(help).toContain('Exit status: 0 all valid');
    expect(help).toContain('--strict');
    expect(help).toContain('1 any invalid');
    expect(help).toContain('3 all valid but an availability check failed');
    expect((await validate(['--version'])).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});

/** The JSON report's availability member. */
interface AvailabilityJson {
  available: boolean;
  summary: { checks: number; failed: number; unavailableTools: number };
  checks: {
    file: string;
    pointer: string;
    label: string;
    tools: string[];
    command: string[];
    available: boolean;
    status: string;
    reason?: string;
    installInstructions?: string;
  }[];
  unavailable: { name: string; file: string; check: string; calls?: string }[];
}

describe('ahma-validate --check-availability', () => {
  it('§2 availability: prints each check as available or unavailable with its reason and install instructions, exit 3', async () => {
    const run = await validate(['availability', '--check-availability']);
    expect(run.code).toBe(3);
    expect(run.stdout).toBe(
      [
        '✓ 4 files valid',
        'availability/missing.json#/availability_check: missing unavailable: "ahma-validate-missing-program" not found on PATH (not offered: missing_run, missing_check)',
        '  to install: Install it with:',
        '      apt install missing-program',
        'availability/partial.json#/availability_check: partial available',
        'availability/partial.json#/subcommand/1/availability_check: partial lint unavailable: exited with 1, expected 0: lint plugin not installed (not offered: partial_lint)',
        '  to install: partial plugin install lint',
        'availability/present.json#/availability_check: present available',
        'availability/ship.json: ship unavailable: its sequence calls partial_lint',
        '✗ 2 of 4 availability checks failed: 4 tools would not be offered',
        '',
      ].join('\n'),
    );
  });

  it('§2 availability: --format json reports every check and every tool that would not be offered', async () => {
    const run = await validate(['availability', '--check-availability', '--format', 'json']);
    expect(run.code).toBe(3);
    const report = JSON.parse(run.stdout) as { valid: boolean; availability: AvailabilityJson };
    expect(report.valid).toBe(true);
    const { availability } = report;
    expect(availability.available).toBe(false);
    expect(availability.summary).toEqual({ checks: 4, failed: 2, unavailableTools: 4 });
    expect(availability.checks.map((check) => [check.label, check.status])).toEqual([
      ['missing', 'not_found'],
      ['partial', 'available'],
      ['partial lint', 'exit_code'],
      ['present', 'available'],
    ]);
    expect(availability.checks[0]).toMatchObject({
      file: 'availability/missing.json',
      pointer: '/availability_check',
      tools: ['missing_run', 'missing_check'],
      command: ['ahma-validate-missing-program', '--version'],
      available: false,
      reason: '"ahma-validate-missing-program" not found on PATH',
      installInstructions: 'Install it with:\n  apt install missing-program',
    });
    expect(availability.checks[3]).toMatchObject({
      available: true,
      installInstructions: 'Printed only when the check fails.',
    });
    expect(availability.unavailable).toEqual([
      {
        name: 'missing_run',
        file: 'availability/missing.json',
        check: 'availability/missing.json#/availability_check',
      },
      {
        name: 'missing_check',
        file: 'availability/missing.json',
        check: 'availability/missing.json#/availability_check',
      },
      {
        name: 'partial_lint',
        file: 'availability/partial.json',
        check: 'availability/partial.json#/subcommand/1/availability_check',
      },
      {
        name: 'ship',
        file: 'availability/ship.json',
        check: 'availability/partial.json#/subcommand/1/availability_check',
        calls: 'partial_lint',
      },
    ]);
  });

  it('§2 availability: every check passing keeps exit 0; no checks at all is said so', async () => {
    const present = await validate(['availability/present.json', '--check-availability']);
    expect(present).toMatchObject({
      code: 0,
      stdout:
        '✓ 1 file valid\navailability/present.json#/availability_check: present available\n✓ 1 availability check passed\n',
    });
    // A tool without a check is offered when its program exists: make is looked up on PATH.
    const lookedUp = await validate(['valid', '--check-availability']);
    expect(lookedUp).toMatchObject({
      code: 0,
      stdout:
        '✓ 3 files valid\nvalid/make.json#/command: make available\n✓ 1 availability check passed\n',
    });
    // A sequence runs no program of its own: nothing to check.
    const none = await validate(['valid/check.json', '--check-availability']);
    expect(none).toMatchObject({ code: 0, stdout: '✓ 1 file valid\nno availability checks\n' });
    const json = await validate(['valid/check.json', '--check-availability', '--format', 'json']);
    expect((JSON.parse(json.stdout) as { availability: AvailabilityJson }).availability).toEqual({
      available: true,
      summary: { checks: 0, failed: 0, unavailableTools: 0 },
      checks: [],
      unavailable: [],
    });
  });

  it('R5.2: an invalid file still gives exit 1, and only the valid files are checked', async () => {
    const run = await validate(['broken', 'availability/missing.json', '--check-availability']);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('✗ 5 problems in 3 of 4 files\n');
    expect(run.stdout).toContain('missing unavailable');
    expect(run.stdout).toMatch(
      /✗ 1 of 1 availability check failed: 2 tools would not be offered\n$/,
    );
  });

  it('without --check-availability no check runs and the report is unchanged', async () => {
    const run = await validate(['availability']);
    expect(run).toMatchObject({ code: 0, stdout: '✓ 4 files valid\n' });
    const json = await validate(['availability', '--format', 'json']);
    expect(JSON.parse(json.stdout)).not.toHaveProperty('availability');
  });

  it('R7.2: the checks run sandboxed, confined to the working directory; --no-sandbox lifts that', async () => {
    const outside = await realpath(await mkdtemp('/var/tmp/ahma-validate-escape-'));
    made.push(outside);
    const target = join(outside, 'written');
    const env = { ...process.env, AHMA_VALIDATE_ESCAPE: target };
    const confined = await validate(['escape', '--check-availability'], fixtures, env);
    expect(confined.code).toBe(3);
    expect(confined.stdout).toContain('escape unavailable: exited with');
    expect(existsSync(target)).toBe(false);

    const unconfined = await validate(
      ['escape', '--check-availability', '--no-sandbox'],
      fixtures,
      env,
    );
    expect(unconfined.code).toBe(0);
    expect(unconfined.stderr).toContain('--no-sandbox: commands run UNCONFINED');
    expect(existsSync(target)).toBe(true);
  });
});
