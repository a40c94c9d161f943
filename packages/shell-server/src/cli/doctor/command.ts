// `ahma-shell doctor [server options] [--json]`: the server's own options (parsed by
// parseCommandLine, so --no-sandbox, --keep-capabilities, --state-dir… apply), the report as a
// table or JSON on stdout, and the exit code: 0 only when writes, reads and hand-off files are
// enforced by the kernel, 1 otherwise, 2 for a usage error, 130 when interrupted.
import { parseCommandLine } from '../options.js';
import type { Environment } from '../../runtime/runtime.js';
import { SERVER_VERSION } from '../../package.js';
import { runDoctor } from './doctor.js';
import { exitCodeOf, formatReport, reportJson } from './report.js';

export const DOCTOR_USAGE = `Usage:
  ahma-shell doctor [server options] [--json]

Runs one probe command per protection through the sandbox the server would use (the same
options, on a throwaway scope) and prints what is enforced on this machine: writes outside the
scope, reads of secrets, hand-off files, network, signals/ptrace to the server, capabilities,
seccomp, Landlock ABI, user namespaces; then a fresh one-time link to the operations page of
each server running now that has one (--mode http, --ops-page). Exits 0 only when writes, reads and hand-off files are
enforced by the kernel, 1 otherwise, 2 for a usage error.

  --json    the report as JSON
  Server options (ahma-shell --help) apply: --no-sandbox, --keep-capabilities, --state-dir, …
`;

export interface DoctorOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

export async function doctorCommand(
  argv: readonly string[],
  env: Environment,
  cwd: string,
  out: DoctorOutput,
): Promise<number> {
  const json = argv.includes('--json');
  const rest = argv.filter((word) => word !== '--json');
  if (rest.includes('--')) return usage(out, 'doctor takes no words after --');
  // parseCommandLine wants a mode or a tool; the doctor serves nothing, so any mode will do.
  const hasMode = rest.some((word) => word === '--mode' || word.startsWith('--mode='));
  const parsed = parseCommandLine(hasMode ? rest : [...rest, '--mode', 'stdio'], env);
  switch (parsed.kind) {
    case 'help':
      out.stdout(DOCTOR_USAGE);
      return 0;
    case 'version':
      out.stdout(`${SERVER_VERSION}\n`);
      return 0;
    case 'usage':
      return usage(out, parsed.error ?? 'bad arguments');
    case 'run':
      break;
  }
  if (parsed.options.toolName !== undefined) return usage(out, 'doctor takes no --tool_name');

  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const report = await runDoctor({
      options: parsed.options,
      env,
      cwd,
      signal: controller.signal,
    });
    out.stdout(json ? reportJson(report) : formatReport(report));
    return exitCodeOf(report);
  } catch (error) {
    if (controller.signal.aborted) {
      out.stderr('ahma-shell doctor: interrupted (its probes and files were removed)\n');
      return 130;
    }
    throw error;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

function usage(out: DoctorOutput, error: string): number {
  out.stderr(`ahma-shell doctor: ${error}\n\n${DOCTOR_USAGE}`);
  return 2;
}
