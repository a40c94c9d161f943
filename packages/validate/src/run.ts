// ahma-validate [TARGET…] [--format text|json] [--check-availability]: validates tool definition
// files and directories and prints every problem, one line each; optionally runs their availability
// checks. Exit 0 all valid, 1 any invalid, 2 usage or I/O error, 3 valid but a check failed.
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

const DEFAULT_TARGET = '.ahma/tools';

const USAGE = `Usage: ahma-validate [TARGET…] [--format text|json] [--check-availability [--no-sandbox]]

Validates Ahma tool definition files (MTDF) and tool_guidance.json.
Warnings (harmless redundancy, keys Ahma ignores) are printed as "warning: …" and do not
make a file invalid.
TARGET is a file or a directory of *.json files (default: ${DEFAULT_TARGET}).
Each problem is printed as: file#/json/pointer: message (hint)

Options:
  --format text|json    output format (default: text)
  --check-availability  then run the availability_check of every valid file, as the server does
                        at startup (in the current directory, sandboxed, 10 s each), and print
                        per tool or subcommand "available" or "unavailable: reason", with the
                        install_instructions and the tools that would not be offered
  --no-sandbox          with --check-availability: run the checks unconfined (trusted files only)
  -h, --help            show this help
  -v, --version         show the version

Exit status: 0 all valid (and, with --check-availability, every check passed), 1 any invalid,
2 usage or I/O error (or the sandbox is unavailable), 3 all valid but an availability check failed.
`;

export async function runValidate(argv: readonly string[], output: Output): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        format: { type: 'string', default: 'text' },
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
    report = await validateToolFiles(targets);
  } catch (error) {
    if (!(error instanceof ToolFileReadError)) throw error;
    output.stderr(`ahma-validate: ${error.message}\n`);
    return EXIT_USAGE;
  }

  let availability: AvailabilityRun | undefined;
  if (values['check-availability'] === true) {
    try {
      availability = await runAvailabilityChecks(report, values['no-sandbox'] === true);
    } catch (error) {
      if (!(error instanceof AhmaError)) throw error;
      output.stderr(`ahma-validate: cannot run the availability checks: ${error.message}\n`);
      return EXIT_USAGE;
    }
    for (const warning of availability.warnings) output.stderr(`ahma-validate: ${warning}\n`);
  }

  // R5.2: warnings are printed but do not make a file invalid.
  const invalid = report.files.filter((file) => file.diagnostics.some(isError));
  const problems = report.files.reduce(
    (sum, file) => sum + file.diagnostics.filter(isError).length,
    0,
  );
  const warnings = report.files.reduce((sum, file) => sum + file.diagnostics.length, 0) - problems;
  if (values.format === 'json') {
    const json = {
      ...jsonReport(report, invalid.length, problems, warnings),
      ...(availability === undefined
        ? {}
        : { availability: availabilityJson(availability.report) }),
    };
    output.stdout(`${JSON.stringify(json, null, 2)}\n`);
  } else {
    for (const file of report.files) {
      for (const diagnostic of file.diagnostics) output.stdout(`${formatDiagnostic(diagnostic)}\n`);
    }
    output.stdout(`${summary(report.files.length, invalid.length, problems, warnings, targets)}\n`);
    if (availability !== undefined) output.stdout(availabilityText(availability.report));
  }
  if (invalid.length > 0) return EXIT_INVALID;
  return (availability?.report.failed.length ?? 0) > 0 ? EXIT_UNAVAILABLE : EXIT_VALID;
}

function summary(
  files: number,
  invalid: number,
  problems: number,
  warnings: number,
  targets: readonly string[],
): string {
  if (files === 0) return `no *.json files in ${targets.join(', ')}`;
  const checked = `${files} file${files === 1 ? '' : 's'}`;
  const warned = warnings === 0 ? '' : ` (${warnings} warning${warnings === 1 ? '' : 's'})`;
  if (invalid === 0) return `✓ ${checked} valid${warned}`;
  return `✗ ${problems} problem${problems === 1 ? '' : 's'} in ${invalid} of ${checked}${warned}`;
}

/** Each issue carries its severity ("error" or "warning"); only errors make a file invalid. */
function jsonReport(report: ValidationReport, invalid: number, problems: number, warnings: number) {
  return {
    valid: invalid === 0,
    summary: { files: report.files.length, invalid, problems, warnings },
    files: report.files.map((file) => ({
      file: file.file,
      valid: !file.diagnostics.some(isError),
      issues: file.diagnostics,
    })),
  };
}

function usageError(output: Output, message: string): number {
  output.stderr(`ahma-validate: ${message}\n\n${USAGE}`);
  return EXIT_USAGE;
}
