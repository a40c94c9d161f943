// Availability checks (SPEC §2): the `availability_check` probes of the loaded definitions run once,
// confined by the sandbox like every other command, concurrently and bounded in time. A failing
// probe hides the tools it covers (a tool-level probe all of the file's tools, a subcommand-level
// one that subcommand's leaves) and hands back its install_instructions for the caller to log.
import type { Executor } from '../process/executor.js';
import { mapBounded, runProbe, type ProbeOutcome, type ProbeSettings } from '../process/probe.js';
import { stepTarget, type CheckedDefinition } from './definition-set.js';
import { jsonPointer } from './diagnostic.js';
import { isBareShell, SEQUENCE_COMMAND, splitCommand } from './flatten.js';
import type { AvailabilityCheck, SubcommandDefinition } from './schema.js';

/** How long one probe may run before it counts as failed. */
export const DEFAULT_AVAILABILITY_TIMEOUT_MS = 10_000;
/** How many probes run at once. */
export const DEFAULT_AVAILABILITY_CONCURRENCY = 8;
/** How much of a probe's output is kept for the report. */

export interface AvailabilityOptions {
  /**
   * Runs the probes, confined and supervised like every command (R7): the engine's executor.
   * Required on purpose: a probe is a command from a definition file, and there is no unconfined
   * default (an engine created with noSandbox is the explicit way to run them unconfined).
   */
  readonly executor: Executor;
  /** Working directory of the probes (default: the sandbox scope). */
  readonly cwd?: string;
  /** Per-probe time limit (default 10 s); then the probe's process tree is stopped. */
  readonly timeoutMs?: number;
  /** Probes running at once (default 8). */
  readonly concurrency?: number;
}

/** The definitions to check; a LoadResult (loadTools) is one. */
export interface AvailabilitySource {
  readonly definitions: readonly CheckedDefinition[];
}

/**
 * How a probe went: `available`; `not_found` (the executable is not on PATH or not executable);
 * `exit_code` (it ran and exited with a code not in success_exit_codes, or died from a signal);
 * `timed_out`; `error` (it could not be started, e.g. the sandbox helper is missing).
 */
export type AvailabilityStatus = 'available' | 'not_found' | 'exit_code' | 'timed_out' | 'error';

/** One declared `availability_check`, before its probe runs. */
export interface DeclaredCheck {
  readonly file: string;
  readonly definitionName: string;
  /** JSON pointer of the object declaring the check: "" for the tool, "/subcommand/1" etc. */
  readonly pointer: string;
  /** "cargo" for a tool-level check, "cargo nextest" for the subcommand cargo → nextest. */
  readonly label: string;
  /** The enabled MCP tools this check covers, in declared order. */
  readonly tools: readonly string[];
  /** The probe's command line (never run through a shell). */
  readonly argv: readonly string[];
  /**
   * `probe`: a declared availability_check, run. `lookup`: the program of a bare-shell tool's leaf
   * (SPEC §2), looked up on PATH without running it (running `rm` or `ls` to see whether they exist
   * would do something, or fail for lack of arguments).
   */
  readonly kind: 'probe' | 'lookup';
  readonly successExitCodes: readonly number[];
  /** The check's install_instructions, else the nearest enclosing declaration's. */
  readonly installInstructions: string | undefined;
}

/** One `availability_check` of one definition, and what its probe found. */
export interface AvailabilityResult extends DeclaredCheck {
  readonly status: AvailabilityStatus;
  readonly available: boolean;
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Why it failed, in a few words ("exited with 3, expected 0"); undefined when available. */
  readonly reason: string | undefined;
  /** The start of the probe's output (stdout and stderr), trimmed. */
  readonly output: string;
  readonly durationMs: number;
}

/** A tool that will not be offered, and the failed check responsible. */
export interface UnavailableTool {
  readonly name: string;
  readonly file: string;
  /** The check that failed: the tool's own (outermost first), or that of a tool its sequence calls. */
  readonly cause: AvailabilityResult;
  /** For a sequence: the unavailable tool one of its steps calls. */
  readonly calls: string | undefined;
}

export interface AvailabilityReport {
  /** Every check covering at least one enabled tool, in definition order then declared order. */
  readonly checks: readonly AvailabilityResult[];
  /** The checks that failed: log each with formatAvailability() and its install_instructions. */
  readonly failed: readonly AvailabilityResult[];
  /** The tools not to offer, in definition order. */
  readonly unavailable: readonly UnavailableTool[];
}

/**
 * Runs every availability check of the definitions: each distinct command line once (two files
 * probing `git --version` share one run), at most `concurrency` at a time, each stopped after
 * `timeoutMs`. Never rejects for a probe's failure. Checks covering only disabled tools are skipped.
 */
export async function checkAvailability(
  source: AvailabilitySource,
  options: AvailabilityOptions,
): Promise<AvailabilityReport> {
  const declared = source.definitions.flatMap(declaredChecks);
  const probes = new Map<string, DeclaredCheck>();
  for (const check of declared) probes.set(probeKey(check), check);

  const settings: ProbeSettings = {
    executor: options.executor,
    cwd: options.cwd ?? options.executor.sandbox.scope,
    timeoutMs: options.timeoutMs ?? DEFAULT_AVAILABILITY_TIMEOUT_MS,
  };
  const outcomes = await mapBounded(
    [...probes],
    Math.max(1, options.concurrency ?? DEFAULT_AVAILABILITY_CONCURRENCY),
    async ([key, check], index) => [key, await runProbe(check, index, settings)] as const,
  );
  const byKey = new Map(outcomes);

  const checks = declared.map((check) => {
    const outcome = byKey.get(probeKey(check));
    if (outcome === undefined) throw new Error('unreachable: every probe ran');
    return judge(check, outcome, settings.timeoutMs);
  });
  const failed = checks.filter((check) => !check.available);
  return { checks, failed, unavailable: unavailableTools(source.definitions, failed) };
}

/** The tools (LoadedTool, ToolLeaf, anything named) that the report leaves available, in order. */
export function availableTools<T extends { readonly name: string }>(
  tools: readonly T[],
  report: Pick<AvailabilityReport, 'unavailable'>,
): T[] {
  const hidden = new Set(report.unavailable.map((tool) => tool.name));
  return tools.filter((tool) => !hidden.has(tool.name));
}

/**
 * One line for a log or a terminal, like a diagnostic:
 * `file#/pointer/availability_check: cargo nextest unavailable: "cargo-nextest" not found on PATH
 * (not offered: cargo_nextest_run)`. The install_instructions are not included: they may span lines.
 */
export function formatAvailability(result: AvailabilityResult): string {
  const at = result.kind === 'lookup' ? result.pointer : `${result.pointer}/availability_check`;
  const where = `${result.file}#${at}: ${result.label}`;
  if (result.available) return `${where} available`;
  return `${where} unavailable: ${result.reason ?? result.status} (not offered: ${result.tools.join(', ')})`;
}

// --- declared checks ---------------------------------------------------------------------------

function declaredChecks(entry: CheckedDefinition): DeclaredCheck[] {
  const { definition, file } = entry;
  const enabledLeaves = entry.leaves.filter((leaf) => leaf.enabled);
  const found: DeclaredCheck[] = [];
  const declare = (
    check: AvailabilityCheck | undefined,
    pointer: string,
    label: string,
    installInstructions: string | undefined,
  ) => {
    if (check === undefined) return;
    // A check covers the leaves at or below the object declaring it ("/subcommand/1" must not
    // match "/subcommand/10", hence the separator).
    const tools = enabledLeaves
      .filter(
        (leaf) =>
          pointer === '' || leaf.pointer === pointer || leaf.pointer.startsWith(`${pointer}/`),
      )
      .map((leaf) => leaf.name);
    if (tools.length === 0) return;
    found.push({
      file,
      definitionName: definition.name,
      pointer,
      label,
      tools,
      // Exactly as declared: Ahma never appends subcommand words (the Rust ahma's
      // skip_subcommand_args: true, which is what it does for a subcommand's own check too).
      argv: [...splitCommand(check.command), ...(check.args ?? [])],
      kind: 'probe',
      successExitCodes: check.success_exit_codes ?? [0],
      installInstructions,
    });
  };

  declare(definition.availability_check, '', definition.name, definition.install_instructions);
  const walk = (
    subs: readonly SubcommandDefinition[] | undefined,
    pointer: (string | number)[],
    label: string,
    install: string | undefined,
  ) => {
    (subs ?? []).forEach((sub, index) => {
      const here = [...pointer, 'subcommand', index];
      const hereLabel = `${label} ${sub.name}`;
      const hereInstall = sub.install_instructions ?? install;
      declare(sub.availability_check, jsonPointer(here), hereLabel, hereInstall);
      walk(sub.subcommand, here, hereLabel, hereInstall);
    });
  };
  walk(definition.subcommand, [], definition.name, definition.install_instructions);
  const command = splitCommand(definition.command);
  if (isBareShell(command)) found.push(...programLookups(entry));
  else if (definition.availability_check === undefined)
    found.push(...programLookup(entry, command));
  return found;
}

/**
 * A tool without a tool-level availability_check is offered only when the program it runs exists
 * (looked up on PATH, not run): `command`'s executable, or a livelog tool's source command. Leaves
 * that run a sequence do not run it; a sequence tool runs none.
 */
function programLookup(entry: CheckedDefinition, command: readonly string[]): DeclaredCheck[] {
  const { definition } = entry;
  const livelog = definition.tool_type === 'livelog' ? definition.livelog : undefined;
  const program = livelog === undefined ? command[0] : livelog.source_command;
  if (program === undefined || program === SEQUENCE_COMMAND) return [];
  const tools = entry.leaves
    .filter((leaf) => leaf.enabled && leaf.sequence === undefined)
    .map((leaf) => leaf.name);
  if (tools.length === 0) return [];
  const pointer = livelog === undefined ? '/command' : '/livelog/source_command';
  return [lookupCheck(entry, program, pointer, program, tools)];
}

/** A bare-shell tool's leaves run their first subcommand word: each such program must exist. */
function programLookups(entry: CheckedDefinition): DeclaredCheck[] {
  return entry.leaves.flatMap((leaf) => {
    const program = leaf.subcommandPath[0];
    if (!leaf.enabled || leaf.sequence !== undefined || leaf.command.length > 0) return [];
    if (program === undefined) return [];
    const label = `${entry.definition.name} ${leaf.subcommandPath.join(' ')}`;
    return [lookupCheck(entry, program, leaf.pointer, label, [leaf.name])];
  });
}

/** A check that only looks `program` up on PATH, for the tools that run it. */
function lookupCheck(
  entry: CheckedDefinition,
  program: string,
  pointer: string,
  label: string,
  tools: readonly string[],
): DeclaredCheck {
  return {
    file: entry.file,
    definitionName: entry.definition.name,
    pointer,
    label,
    tools,
    argv: [program],
    kind: 'lookup',
    successExitCodes: [0],
    installInstructions: entry.definition.install_instructions,
  };
}

function probeKey(check: DeclaredCheck): string {
  return JSON.stringify([check.kind, check.argv]);
}

function judge(check: DeclaredCheck, outcome: ProbeOutcome, timeoutMs: number): AvailabilityResult {
  const base = {
    ...check,
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    output: outcome.output,
    durationMs: outcome.durationMs,
  };
  const fail = (status: Exclude<AvailabilityStatus, 'available'>, reason: string) => ({
    ...base,
    status,
    available: false,
    reason,
  });
  const command = check.argv[0] ?? '';
  switch (outcome.kind) {
    case 'not_found':
      return fail(
        'not_found',
        command.includes('/')
          ? `"${command}" does not exist or is not executable`
          : `"${command}" not found on PATH`,
      );
    case 'timed_out':
      return fail('timed_out', `timed out after ${formatDuration(timeoutMs)}`);
    case 'error':
      return fail('error', `could not run the check: ${outcome.message ?? 'unknown error'}`);
    case 'exited':
      break;
  }
  if (outcome.exitCode !== null && check.successExitCodes.includes(outcome.exitCode)) {
    return { ...base, status: 'available', available: true, reason: undefined };
  }
  const expected =
    check.successExitCodes.length === 1
      ? `expected ${String(check.successExitCodes[0])}`
      : `expected one of ${check.successExitCodes.join(', ')}`;
  const ended =
    outcome.exitCode === null
      ? `killed by ${outcome.signal ?? 'a signal'}`
      : `exited with ${String(outcome.exitCode)}`;
  const firstLine = outcome.output.split('\n', 1)[0]?.trim() ?? '';
  const detail = firstLine === '' ? '' : `: ${firstLine.slice(0, 200)}`;
  return fail('exit_code', `${ended}, ${expected}${detail}`);
}

function formatDuration(ms: number): string {
  return ms < 1000 || ms % 1000 !== 0 ? `${String(ms)} ms` : `${String(ms / 1000)} s`;
}

/**
 * The tools the failed checks remove, then (until nothing changes) the sequences that call a
 * removed tool: such a sequence would fail at its step, so it is not offered either.
 */
function unavailableTools(
  definitions: readonly CheckedDefinition[],
  failed: readonly AvailabilityResult[],
): UnavailableTool[] {
  const removed = new Map<string, UnavailableTool>();
  for (const check of failed) {
    for (const name of check.tools) {
      // Outermost first: a tool-level failure is reported, not the subcommand's behind it.
      if (!removed.has(name))
        removed.set(name, { name, file: check.file, cause: check, calls: undefined });
    }
  }
  const leaves = definitions.flatMap((entry) =>
    entry.leaves.filter((leaf) => leaf.enabled).map((leaf) => ({ leaf, file: entry.file })),
  );
  const enabled = leaves.map(({ leaf }) => leaf);
  let changed = removed.size > 0;
  while (changed) {
    changed = false;
    for (const { leaf, file } of leaves) {
      if (leaf.sequence === undefined || removed.has(leaf.name)) continue;
      for (const step of leaf.sequence) {
        const target = removed.get(stepTarget(step, enabled));
        if (target === undefined) continue;
        removed.set(leaf.name, { name: leaf.name, file, cause: target.cause, calls: target.name });
        changed = true;
        break;
      }
    }
  }
  return leaves.flatMap(({ leaf }) => removed.get(leaf.name) ?? []);
}
