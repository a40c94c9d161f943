// ahma-validate [TARGET…] [--format text|json]: validates tool definition files and directories and
// prints every problem, one line each. Exit 0 all valid, 1 any invalid, 2 usage or I/O error.
import { parseArgs } from 'node:util';
import {
  formatDiagnostic,
  ToolFileReadError,
  validateToolFiles,
  type ValidationReport,
} from '@ahma/core';
import packageJson from '../package.json' with { type: 'json' };

export const EXIT_VALID = 0;
export const EXIT_INVALID = 1;
export const EXIT_USAGE = 2;

/** Where the command writes; injected so tests can capture it. */
export interface Output {
  stdout(text: string): void;
  stderr(text: string): void;
}

const DEFAULT_TARGET = '.ahma/tools';

const USAGE = `Usage: ahma-validate [TARGET…] [--format text|json]

Validates Ahma tool definition files (MTDF) and tool_guidance.json.
TARGET is a file or a directory of *.json files (default: ${DEFAULT_TARGET}).
Each problem is printed as: file#/json/pointer: message (hint)

Options:
  --format text|json  output format (default: text)
  -h, --help          show this help
  -v, --version       show the version

Exit status: 0 all valid, 1 any invalid, 2 usage or I/O error.
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

  const invalid = report.files.filter((file) => file.diagnostics.length > 0);
  const problems = invalid.reduce((sum, file) => sum + file.diagnostics.length, 0);
  if (values.format === 'json') {
    output.stdout(`${JSON.stringify(jsonReport(report, invalid.length, problems), null, 2)}\n`);
  } else {
    for (const file of invalid) {
      for (const diagnostic of file.diagnostics) output.stdout(`${formatDiagnostic(diagnostic)}\n`);
    }
    output.stdout(`${summary(report.files.length, invalid.length, problems, targets)}\n`);
  }
  return invalid.length > 0 ? EXIT_INVALID : EXIT_VALID;
}

function summary(
  files: number,
  invalid: number,
  problems: number,
  targets: readonly string[],
): string {
  if (files === 0) return `no *.json files in ${targets.join(', ')}`;
  const checked = `${files} file${files === 1 ? '' : 's'}`;
  if (invalid === 0) return `✓ ${checked} valid`;
  return `✗ ${problems} problem${problems === 1 ? '' : 's'} in ${invalid} of ${checked}`;
}

function jsonReport(report: ValidationReport, invalid: number, problems: number) {
  return {
    valid: invalid === 0,
    summary: { files: report.files.length, invalid, problems },
    files: report.files.map((file) => ({
      file: file.file,
      valid: file.diagnostics.length === 0,
      issues: file.diagnostics,
    })),
  };
}

function usageError(output: Output, message: string): number {
  output.stderr(`ahma-validate: ${message}\n\n${USAGE}`);
  return EXIT_USAGE;
}
