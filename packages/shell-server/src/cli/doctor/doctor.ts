// `ahma-shell doctor` (R7.12): what is enforced on this machine, measured. It creates a real
// engine with the sandbox options the server would use, on a throwaway scope (workspace.ts), runs
// one probe command per protection through it, and always removes the engine's state and the
// workspace afterwards. logDoctorReport puts the same table in the log (at --debug start).
import { createEngine, type Engine, type Logger as CoreLogger } from '@ahma/core';
import type { Logger } from 'pino';
import type { ServerOptions } from '../../runtime/settings.js';
import { sandboxEngineOptions, type Environment } from '../../runtime/runtime.js';
import { recordedLinks } from '../../ops/link-record.js';
import { checkCredentialPaths } from './credential-paths.js';
import { machine, userNamespaces } from './host.js';
import {
  exitCodeOf,
  formatReport,
  ROW_IDS,
  row,
  verdictLine,
  type DoctorReport,
  type DoctorRow,
} from './report.js';
import { probeHandoff, probeReads, probeWrites } from './file-probes.js';
import { landlockRow, networkRow } from './mode-rows.js';
import { probeProcess, probeSignals } from './process-probes.js';
import { createWorkspace, type Workspace } from './workspace.js';

export interface DoctorSettings {
  readonly options: ServerOptions;
  /** The server's environment (HOME, TMPDIR, XDG_STATE_HOME decide the policy and the state). */
  readonly env: Environment;
  /** Where relative paths of the options are resolved from. */
  readonly cwd: string;
  /** Where the engine reports trouble it handles on its own (the warm shells'); silent if none. */
  readonly logger?: CoreLogger | undefined;
  /** Stops the probes (the workspace and the engine are still removed). */
  readonly signal?: AbortSignal | undefined;
}

/** Measures every protection; never leaves the engine's state or the workspace behind. */
export async function runDoctor(settings: DoctorSettings): Promise<DoctorReport> {
  const where = machine();
  let workspace: Workspace;
  try {
    workspace = await createWorkspace(settings.env);
  } catch (error) {
    return unmeasured(where, `no workspace for the probes: ${message(error)}`);
  }
  let engine: Engine | undefined;
  try {
    try {
      // The server's sandbox (the profiles of --tools bundles aside) on the doctor's own scope,
      // plus the probe's planted secret: a file beside a readable one that a deny must hide.
      const sandbox = sandboxEngineOptions({
        options: settings.options,
        env: settings.env,
        cwd: settings.cwd,
        scope: workspace.scope,
        profiles: settings.options.profiles,
      });
      engine = await createEngine({
        ...sandbox,
        extraReadable: [...(sandbox.extraReadable ?? []), workspace.outside],
        denyRead: [...(sandbox.denyRead ?? []), workspace.secretFile],
        ...(settings.logger === undefined ? {} : { logger: settings.logger }),
      });
    } catch (error) {
      return unmeasured(where, `the sandbox did not start: ${message(error)}`);
    }
    const context = {
      engine,
      workspace,
      serverPid: process.pid,
      keepCapabilities: settings.options.keepCapabilities,
      signal: settings.signal,
    };
    const credentials = await checkCredentialPaths(engine, [workspace.secretFile]);
    const host = await userNamespaces(settings.env);
    const writes = await probeWrites(context);
    const reads = await probeReads(context, credentials);
    const handoff = await probeHandoff(context);
    const signals = await probeSignals(context);
    const processRows = await probeProcess(context, host);
    const network = await networkRow(context);
    const rows = [
      writes,
      reads,
      handoff,
      network,
      signals,
      processRows.capabilities,
      processRows.seccomp,
      landlockRow(engine),
      processRows.userns,
    ];
    const unconfined = engine.sandbox.mechanism === 'none';
    return {
      machine: where,
      mechanism: engine.sandbox.mechanism,
      abi: engine.sandbox.abi,
      rows: unconfined ? rows.map(noSandbox) : rows,
      notes: engine.sandbox.warnings,
      opsPages: await recordedLinks(engine.state.root),
    };
  } finally {
    await engine?.close().catch(() => undefined);
    await workspace.dispose().catch(() => undefined);
  }
}

/** Under --no-sandbox nothing is Ahma's doing, whatever a probe met. */
function noSandbox(each: DoctorRow): DoctorRow {
  if (each.id === 'network') return each;
  const why =
    each.status === 'not enforced'
      ? `--no-sandbox: ${each.why}`
      : '--no-sandbox: commands run unconfined';
  return row(each.id, 'not enforced', why);
}

/** Every row not enforced, for a doctor that could not run its probes; the reason as a note. */
function unmeasured(where: string, reason: string): DoctorReport {
  const [first = reason] = reason.split('\n');
  return {
    machine: where,
    mechanism: 'none',
    abi: undefined,
    rows: ROW_IDS.map((id) => row(id, 'not enforced', `not measured: ${first}`)),
    notes: [reason],
    opsPages: [],
  };
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * For the lead's `--debug` start: runs the doctor with the server's options and environment and
 * logs its table at debug level (and its structured rows). Never throws; returns the report, or
 * undefined when the doctor itself failed (logged as a warning).
 */
export async function logDoctorReport(settings: {
  readonly options: ServerOptions;
  readonly env: Environment;
  readonly cwd: string;
  readonly logger: Logger;
}): Promise<DoctorReport | undefined> {
  try {
    const report = await runDoctor({ ...settings, logger: settings.logger });
    settings.logger.debug(
      { doctor: report.rows, exitCode: exitCodeOf(report), verdict: verdictLine(report) },
      `ahma-shell doctor\n${formatReport(report)}`,
    );
    return report;
  } catch (error) {
    settings.logger.warn({ err: error }, 'ahma-shell doctor could not run');
    return undefined;
  }
}
