// ahma-validate [TARGET…] [--format text|json] [--strict] [--check-availability]: validates tool
// definition files and directories and prints every problem, one line each; optionally runs their
// availability checks. Exit 0 all valid, 1 any invalid (with --strict: any warning too), 2 usage or
// I/O error, 3 valid but a check failed.
import { parseArgs } from 'node:util';
import {
  AhmaError,
  formatDiagnostic,
  isError,
  ToolFileReadError,
  validateToolFiles,
  type ValidationReport,
} from '@ahma/core';
import packageJson from '../package.json' with { type: 'json' };
import {
  availabilityJson,
  availabilityText,
  runAvailabilityChecks,
  type AvailabilityRun,
} from './availability.js';

/** One problem of one file, as the report carries it. */
type Diagnostic = ValidationReport['files'][number]['diagnostics'][number];

export const EXIT_VALID = 0;
export const EXIT_INVALID = 1;
export const EXIT_USAGE = 2;
/** With --check-availability: every file is valid, but a tool would not be offered here. */
export const EXIT_UNAVAILABLE = 3;

/** Where the command writes; injected so tests can capture it. */
export interface Output {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** What the command would take from its process; injected so tests can run it in-process. */
export interface RunOptions extends Output {
  /**
   * The working directory: relative targets and the default target are read from it, and the
   * availability checks run in it, confined to it (default: the process's).
   */
  readonly cwd?: string | undefined;
  /** The environment of the availability checks: PATH, HOME, the state root (default: the process's). */
  readonly env?: NodeJS.ProcessEnv | undefined;
}

const DEFAULT_TARGET = '.ahma/tools';

const USAGE = `Usage: ahma-validate [TARGET…] [--format text|json] [--strict] [--check-availability [--no-sandbox]]

Validates Ahma tool definition files (MTDF) and tool_guidance.json.
Warnings (harmless redundancy, keys Ahma ignores) are printed as "warning: …" and do not
make a file invalid, unless --strict is given.
TARGET is a file or a directory of *.json files (default: ${DEFAULT_TARGET}).
Each problem is printed as: file#/json/pointer: message (hint)

Options:
  --format text|json    output format (default: text)
  --strict              warnings count as problems: a file with a warning is invalid (exit 1)
  --check-availability  then run the availability_check of every valid file, as the server does
                        at startup (in the current directory, sandboxed, 10 s each), and print
                        per tool or subcommand "available" or "unavailable: reason", with the
                        install_instructions and the tools that would not be offered
  --no-sandbox          with --check-availability: run the checks unconfined (trusted files only)
  -h, --help            show this help
  -v, --version         show the version

Exit status: 0 all valid (and, with --check-availability, every check passed), 1 any invalid
(with --strict: any warning too),
2 usage or I/O error (or the sandbox is unavailable), 3 all valid but an availability check failed.
`;

export async function runValidate(argv: readonly string[], options: RunOptions): Promise<number> {
  const output: Output = options;
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        format: { type: 'string', default: 'text' },
        strict: { type: 'boolean' },
        'check-availability': { type: 'boolean' },
        'no-sandbox': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (error) {
    return usageError(output, error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    output.stdout(USAGE);
    return EXIT_VALID;
  }
  if (values.version === true) {
    output.stdout(`${packageJson.version}\n`);
    return EXIT_VALID;
  }
  if (values.format !== 'text' && values.format !== 'json') {
    return usageError(output, `--format must be "text" or "json", not "${values.format}"`);
  }

  const targets = positionals.length > 0 ? positionals : [DEFAULT_TARGET];
  let report: ValidationReport;
  try {
    report = await validateToolFiles(
      targets,
      options.cwd === undefined ? {} : { cwd: options.cwd },
    );
  } catch (error) {
    if (!(error instanceof ToolFileReadError)) throw error;
    output.stderr(`ahma-validate: ${error.message}\n`);
    return EXIT_USAGE;
  }

  let availability: AvailabilityRun | undefined;
  if (values['check-availability'] === true) {
    try {
      availability = await runAvailabilityChecks(report, {
        noSandbox: values['no-sandbox'] === true,
        cwd: options.cwd ?? process.cwd(),
        env: options.env ?? process.env,
      });
    } catch (error) {
      if (!(error instanceof AhmaError)) throw error;
      output.stderr(`ahma-validate: cannot run the availability checks: ${error.message}\n`);
      return EXIT_USAGE;
    }
    for (const warning of availability.warnings) output.stderr(`ahma-validate: ${warning}\n`);
  }

  // R5.2: warnings are printed but do not make a file invalid, unless --strict says they do.
  const strict = values.strict === true;
  const fails = (d: Diagnostic) => isError(d) || strict;
  const invalid = report.files.filter((file) => file.diagnostics.some(fails));
  const errors = report.files.reduce(
    (sum, file) => sum + file.diagnostics.filter(isError).length,
    0,
  );
  const warnings = report.files.reduce((sum, file) => sum + file.diagnostics.length, 0) - errors;
  const counts: Counts = { invalid: invalid.length, errors, warnings, strict };
  if (values.format === 'json') {
    const json = {
      ...jsonReport(report, counts, fails),
      ...(availability === undefined
        ? {}
        : { availability: availabilityJson(availability.report) }),
    };
    output.stdout(`${JSON.stringify(json, null, 2)}\n`);
  } else {
    for (const file of report.files) {
      for (const diagnostic of file.diagnostics) output.stdout(`${formatDiagnostic(diagnostic)}\n`);
    }
    output.stdout(`${summary(report.files.length, counts, targets)}\n`);
    if (availability !== undefined) output.stdout(availabilityText(availability.report));
  }
  if (invalid.length > 0) return EXIT_INVALID;
  return (availability?.report.failed.length ?? 0) > 0 ? EXIT_UNAVAILABLE : EXIT_VALID;
}

interface Counts {
  /** Files that fail: with an error, or with --strict a warning. */
  readonly invalid: number;
  readonly errors: number;
  readonly warnings: number;
  readonly strict: boolean;
}

function summary(files: number, counts: Counts, targets: readonly string[]): string {
  if (files === 0) return `no *.json files in ${targets.join(', ')}`;
  const { invalid, errors, warnings, strict } = counts;
  const checked = `${files} file${files === 1 ? '' : 's'}`;
  const warned = warnings === 0 ? '' : ` (${plural(warnings, 'warning')})`;
  if (invalid === 0) return `✓ ${checked} valid${warned}`;
  if (!strict) return `✗ ${plural(errors, 'problem')} in ${invalid} of ${checked}${warned}`;
  // --strict: every warning is one of the problems.
  const strictly = warnings === 0 ? '' : ` (${plural(warnings, 'warning')}, counted by --strict)`;
  return `✗ ${plural(errors + warnings, 'problem')} in ${invalid} of ${checked}${strictly}`;
}

function plural(count: number, noun: string): string {
  return `${String(count)} ${noun}${count === 1 ? '' : 's'}`;
}

/**
 * Each issue carries its severity ("error" or "warning"); only errors make a file invalid, and
 * with --strict warnings too (the summary then says `"strict": true` and counts them as problems).
 */
function jsonReport(
  report: ValidationReport,
  counts: Counts,
  fails: (diagnostic: Diagnostic) => boolean,
) {
  const { invalid, errors, warnings, strict } = counts;
  return {
    valid: invalid === 0,
    summary: {
      files: report.files.length,
      invalid,
      problems: strict ? errors + warnings : errors,
      warnings,
      ...(strict ? { strict } : {}),
    },
    files: report.files.map((file) => ({
      file: file.file,
      valid: !file.diagnostics.some(fails),
      issues: file.diagnostics,
    })),
  };
}

function usageError(output: Output, message: string): number {
  output.stderr(`ahma-validate: ${message}\n\n${USAGE}`);
  return EXIT_USAGE;
}
