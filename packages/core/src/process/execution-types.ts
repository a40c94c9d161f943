// What runs and how it ended: the types the executor, the shell pool, output collection, sequences
// and operations all share. A module of its own below them all, so none imports another for them.
import type { EgressRefusal } from '../network/egress-proxy.js';

/**
 * How a command ended, recorded once: `timed_out` and `cancelled` when the server stopped it (its
 * timeout or idle limit; a cancel), else `completed` for exit 0 and `failed` for anything else.
 */
export type ExecutionStatus = 'completed' | 'failed' | 'timed_out' | 'cancelled';

/** What to run: a program with its arguments, or a script for `bash -c` (sandboxed_shell only). */
export type Command =
  | { readonly kind: 'argv'; readonly argv: readonly string[] }
  | { readonly kind: 'shell'; readonly script: string };

export interface ExecutionResult {
  /** How it ended: the one place that says so (exitCode and signal say what the process did). */
  readonly status: ExecutionStatus;
  /** The exit code, or null when the command died from a signal or never started. */
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Merged stdout and stderr, cleaned and held to the output budget (R15.2, output.ts). */
  readonly output: string;
  readonly truncated: boolean;
  readonly fullOutputPath: string | undefined;
  readonly durationMs: number;
  /** A sequence's steps, each with its own outcome (the output is their transcript). */
  readonly steps?: readonly StepRecord[];
  /** R7.11: hand-off files that changed while the command ran (absolute paths); absent: none. */
  readonly handoffWrites?: readonly HandoffWrite[];
  /** R7.17: connections the egress proxy refused the command (`--network proxy`); absent: none. */
  readonly networkRefusals?: readonly NetworkRefusal[];
  /**
   * R7.18: paths (absolute) a failed command was refused writing because they lie outside every
   * writable path; a person may allow them. Absent: none.
   */
  readonly writeRefusals?: readonly string[];
}

/** A connection the egress proxy refused a command, once per host, port and kind of refusal. */
export interface NetworkRefusal {
  /** As the command named it (normalized). */
  readonly host: string;
  readonly port: number;
  readonly refusal: EgressRefusal;
  /** One sentence: what was refused and why. */
  readonly reason: string;
  /** The loopback or private address a name led to (`private`), the one a grant must name. */
  readonly address?: string | undefined;
}

/** A trust hand-off file created, changed or removed (sandbox/handoff.ts finds them). */
export interface HandoffWrite {
  /** Absolute. */
  readonly path: string;
  readonly change: 'created' | 'changed' | 'removed';
}

/** How a step went; `refused`: its call was refused before it ran; `not_run`: an earlier step stopped the sequence. */
export type StepStatus = ExecutionStatus | 'refused' | 'not_run';

export interface StepRecord {
  /** 1-based. */
  readonly step: number;
  readonly label: string;
  /** How the transcript shows the step's command (`bash -c SCRIPT` for a script). */
  readonly argv: readonly string[];
  /** What ran (the audit records its real argv); undefined for a step that did not run. */
  readonly command: Command | undefined;
  /** Where it ran; undefined for a step that did not run. */
  readonly cwd: string | undefined;
  readonly status: StepStatus;
  readonly exitCode: number | null;
  /** ISO timestamps; undefined for a step that did not run. */
  readonly startedAt: string | undefined;
  readonly finishedAt: string | undefined;
  readonly durationMs: number;
  readonly output: string;
  readonly truncated: boolean;
  readonly fullOutputPath: string | undefined;
}
