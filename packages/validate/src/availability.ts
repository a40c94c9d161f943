// ahma-validate --check-availability: runs the availability checks of the valid definition files
// the way the server does at startup (confined, concurrent, bounded in time) and reports, per tool
// or subcommand, whether it would be offered here and how to install what is missing.
import { readFile, realpath } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import {
  checkAvailability,
  createEngine,
  DocumentChecker,
  formatAvailability,
  GUIDANCE_FILE_NAME,
  isError,
  type AvailabilityReport,
  type CheckedDefinition,
  type ValidationReport,
} from '@ahma/core';

export interface AvailabilityRun {
  readonly report: AvailabilityReport;
  /** Sandbox warnings (running unconfined, as root) for stderr. */
  readonly warnings: readonly string[];
}

export interface AvailabilityOptions {
  /** --no-sandbox: run the probes unconfined. */
  readonly noSandbox: boolean;
  /** The working directory: the probes run in it, confined to it; relative file names are in it. */
  readonly cwd: string;
  /** The probes' environment (PATH, HOME, the state root). */
  readonly env: NodeJS.ProcessEnv;
}

/**
 * The checks of the files that validated cleanly (an invalid file is never loaded, so its checks
 * would never run either). Probes run in the working directory, confined to it like the server's
 * commands are to their scope; `noSandbox` runs them unconfined. Throws AhmaError
 * SANDBOX_UNAVAILABLE when the sandbox cannot be set up.
 */
export async function runAvailabilityChecks(
  validation: ValidationReport,
  { noSandbox, cwd, env }: AvailabilityOptions,
): Promise<AvailabilityRun> {
  const definitions = await validDefinitions(validation, cwd);
  // An engine of its own (no shell pool, for a handful of probes), whose state directory goes
  // with it.
  const engine = await createEngine({
    scope: await realpath(cwd),
    noSandbox,
    noShellPool: true,
    env,
  });
  try {
    const report = await checkAvailability({ definitions }, { executor: engine.executor });
    return { report, warnings: engine.sandbox.warnings };
  } finally {
    await engine.close();
  }
}

async function validDefinitions(
  validation: ValidationReport,
  cwd: string,
): Promise<CheckedDefinition[]> {
  const checker = new DocumentChecker();
  const files = validation.files.filter(
    (entry) => !entry.diagnostics.some(isError) && basename(entry.file) !== GUIDANCE_FILE_NAME,
  );
  const definitions: CheckedDefinition[] = [];
  for (const { file } of files) {
    // Read where the user named it; reported under the name as given.
    const checked = checker.checkDefinition(file, await readFile(resolve(cwd, file), 'utf8'));
    if (checked.ok)
      definitions.push({ file, definition: checked.definition, leaves: checked.leaves });
  }
  return definitions;
}

/** The text report: one line per check, the install instructions of each failure, a summary. */
export function availabilityText(report: AvailabilityReport): string {
  const lines: string[] = [];
  for (const result of report.checks) {
    lines.push(formatAvailability(result));
    if (!result.available && result.installInstructions !== undefined) {
      const [first = '', ...rest] = result.installInstructions.trim().split('\n');
      lines.push(`  to install: ${first}`, ...rest.map((line) => `    ${line}`));
    }
  }
  for (const tool of report.unavailable) {
    if (tool.calls !== undefined) {
      lines.push(`${tool.file}: ${tool.name} unavailable: its sequence calls ${tool.calls}`);
    }
  }
  lines.push(availabilitySummary(report));
  return `${lines.join('\n')}\n`;
}

function availabilitySummary(report: AvailabilityReport): string {
  const checks = report.checks.length;
  if (checks === 0) return 'no availability checks';
  const counted = `${String(checks)} availability check${checks === 1 ? '' : 's'}`;
  if (report.failed.length === 0) return `✓ ${counted} passed`;
  const tools = report.unavailable.length;
  return `✗ ${String(report.failed.length)} of ${counted} failed: ${String(tools)} tool${tools === 1 ? '' : 's'} would not be offered`;
}

/** The `availability` member of the JSON report. */
export function availabilityJson(report: AvailabilityReport) {
  return {
    available: report.failed.length === 0,
    summary: {
      checks: report.checks.length,
      failed: report.failed.length,
      unavailableTools: report.unavailable.length,
    },
    checks: report.checks.map((result) => ({
      file: result.file,
      pointer: `${result.pointer}/availability_check`,
      label: result.label,
      tools: result.tools,
      command: result.argv,
      successExitCodes: result.successExitCodes,
      available: result.available,
      status: result.status,
      ...(result.reason === undefined ? {} : { reason: result.reason }),
      exitCode: result.exitCode,
      ...(result.output === '' ? {} : { output: result.output }),
      ...(result.installInstructions === undefined
        ? {}
        : { installInstructions: result.installInstructions }),
    })),
    unavailable: report.unavailable.map((tool) => ({
      name: tool.name,
      file: tool.file,
      check: `${tool.cause.file}#${tool.cause.pointer}/availability_check`,
      ...(tool.calls === undefined ? {} : { calls: tool.calls }),
    })),
  };
}
