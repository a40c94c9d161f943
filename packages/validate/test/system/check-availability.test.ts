// ahma-validate --check-availability, called in-process: the checks run for real, as the server
// runs them at startup (sandboxed probes, PATH lookups), and are reported per tool.
import { existsSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixtures, tempDirs, validate } from '../support/validate.js';

const tempDir = tempDirs();

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

describe.concurrent('ahma-validate --check-availability, in-process', () => {
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

  it('R7.2: the checks run sandboxed, confined to the working directory; --no-sandbox lifts that', async () => {
    const outside = await realpath(await tempDir('/var/tmp/ahma-validate-escape-'));
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
