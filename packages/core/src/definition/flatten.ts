// Turns one definition into the MCP tools it produces: one per leaf subcommand, named
// `<name>_<path>` with "default" segments collapsed, with inherited settings resolved.
import type {
  ArgumentDefinition,
  Hints,
  SequenceStep,
  SubcommandDefinition,
  ToolDefinition,
  WorkspaceLane,
} from './schema.js';
import type { NetworkMode } from '../sandbox/network.js';
import { ASYNC_GUIDANCE_KEY, type GuidanceBlocks } from './guidance.js';
import { jsonPointer } from './diagnostic.js';
import { describeHints } from './hints.js';
import { livelogSettings, type LivelogSettings } from './livelog-settings.js';

/** The command word that marks a definition whose tools run sequences rather than a program. */
export const SEQUENCE_COMMAND = 'sequence';

/** A subcommand segment that collapses into its parent in tool names and argv. */
export const DEFAULT_SEGMENT = 'default';

/** Everything needed to list and run one MCP tool produced by a definition. */
export interface ToolLeaf {
  /** MCP tool name, e.g. "git_commit". */
  readonly name: string;
  /** The definition's name, e.g. "git". */
  readonly definitionName: string;
  /** JSON pointer of the leaf inside its file ("" for a tool without subcommands). */
  readonly pointer: string;
  /**
   * The executable and its fixed leading arguments; empty for a leaf of a bare-shell tool, whose
   * first subcommand word is the program (see isBareShell).
   */
  readonly command: readonly string[];
  /** Subcommand words passed after the command ("default" segments removed). */
  readonly subcommandPath: readonly string[];
  /**
   * The subcommand names from the definition down to this leaf as declared, "default" included:
   * sequence steps resolve against it, so "default" collapses only where it is a whole path word.
   */
  readonly declaredPath: readonly string[];
  /** The author's description of the leaf (or of the tool when it has no subcommands). */
  readonly baseDescription: string;
  readonly enabled: boolean;
  readonly synchronous: boolean;
  readonly timeoutSeconds: number | undefined;
  readonly guidanceKey: string | undefined;
  /** Options passed to the command (a declared `working_directory` is not one of them). */
  readonly options: readonly ArgumentDefinition[];
  readonly positionals: readonly ArgumentDefinition[];
  /**
   * A declared `working_directory` option or positional (Rust ahma tool files declare one): it
   * is the meta-parameter, described in the inputSchema as declared and never passed on.
   */
  readonly workingDirectory: ArgumentDefinition | undefined;
  /** The definition's hints for the agent, appended to the description. */
  readonly hints: Hints | undefined;
  readonly positionalsFirst: boolean;
  /** Steps when this tool runs a sequence instead of the command. */
  readonly sequence: readonly SequenceStep[] | undefined;
  readonly stepDelayMs: number;
  /** Where the steps are declared (the leaf or the top level), for diagnostics. */
  readonly sequencePointer: string | undefined;
  /** A livelog tool's monitor settings (it runs these, not `command`); undefined otherwise. */
  readonly livelog?: LivelogSettings | undefined;
  /** R7.15, R7.16: the file's own network mode, when it asks for less than the server's. */
  readonly network?: NetworkMode | undefined;
  /**
   * The workspace lane the file declares for this leaf (`concurrency`, the nearest declaration
   * winning, as upstream); undefined when it declares none and the server chooses. `mutates`
   * never chooses it: upstream reads that only in its agent's approval prompt.
   */
  readonly lane?: WorkspaceLane | undefined;
  /** The file's `mutates` for this leaf (nearest declaration wins); undefined when not said. */
  readonly mutates?: boolean | undefined;
}

interface Inherited {
  readonly enabled: boolean;
  readonly synchronous: boolean | undefined;
  readonly timeoutSeconds: number | undefined;
  readonly guidanceKey: string | undefined;
  readonly lane: WorkspaceLane | undefined;
  readonly mutates: boolean | undefined;
}

/** All leaves of a definition, disabled ones included (callers filter on `enabled`). */
export function flattenDefinition(definition: ToolDefinition): ToolLeaf[] {
  const command = splitCommand(definition.command);
  const isSequenceTool = command[0] === SEQUENCE_COMMAND && command.length === 1;
  const topSequence = isSequenceTool ? definition.sequence : undefined;
  const inherited: Inherited = {
    enabled: definition.enabled ?? true,
    synchronous: definition.synchronous,
    timeoutSeconds: definition.timeout_seconds,
    guidanceKey: definition.guidance_key,
    lane: definition.concurrency,
    mutates: definition.mutates,
  };
  const base = {
    definitionName: definition.name,
    command: isSequenceTool ? [] : command,
    hints: definition.hints,
    network: definition.network,
  };
  const bareShell = !isSequenceTool && isBareShell(command);

  if (definition.subcommand === undefined) {
    return [
      {
        ...base,
        name: definition.name,
        pointer: '',
        subcommandPath: [],
        declaredPath: [],
        baseDescription: definition.description,
        ...settle(inherited),
        options: [],
        positionals: [],
        workingDirectory: undefined,
        positionalsFirst: false,
        sequence: topSequence,
        stepDelayMs: definition.step_delay_ms ?? 0,
        sequencePointer: topSequence === undefined ? undefined : '/sequence',
        livelog: livelogSettings(definition),
      },
    ];
  }

  const leaves: ToolLeaf[] = [];
  const walk = (
    subs: readonly SubcommandDefinition[],
    path: string[],
    declaredNames: string[],
    pointer: (string | number)[],
    outer: Inherited,
  ) => {
    subs.forEach((sub, index) => {
      const here = [...pointer, 'subcommand', index];
      const settings: Inherited = {
        enabled: outer.enabled && (sub.enabled ?? true),
        synchronous: sub.synchronous ?? outer.synchronous,
        timeoutSeconds: sub.timeout_seconds ?? outer.timeoutSeconds,
        guidanceKey: sub.guidance_key ?? outer.guidanceKey,
        lane: sub.concurrency ?? outer.lane,
        mutates: sub.mutates ?? outer.mutates,
      };
      const segments = sub.name === DEFAULT_SEGMENT ? path : [...path, sub.name];
      const declaredHere = [...declaredNames, sub.name];
      if (sub.subcommand !== undefined) {
        walk(sub.subcommand, segments, declaredHere, here, settings);
        return;
      }
      const ownSequence = sub.sequence;
      const sequence = ownSequence ?? topSequence;
      const declared = [...(sub.options ?? []), ...(sub.positional_args ?? [])];
      leaves.push({
        ...base,
        ...(bareShell && segments.length > 0 ? { command: [] } : {}),
        name: [definition.name, ...segments].join('_'),
        pointer: jsonPointer(here),
        subcommandPath: segments,
        declaredPath: declaredHere,
        baseDescription: sub.description,
        ...settle(settings),
        options: (sub.options ?? []).filter((option) => !isDeclaredMetaParameter(option)),
        positionals: (sub.positional_args ?? []).filter((p) => !isDeclaredMetaParameter(p)),
        workingDirectory: declared.find(isWorkingDirectory),
        positionalsFirst: sub.positional_args_first ?? false,
        sequence,
        stepDelayMs:
          (ownSequence === undefined ? definition.step_delay_ms : sub.step_delay_ms) ?? 0,
        sequencePointer:
          ownSequence !== undefined
            ? `${jsonPointer(here)}/sequence`
            : topSequence === undefined
              ? undefined
              : '/sequence',
      });
    });
  };
  walk(definition.subcommand, [], [], [], inherited);
  return leaves;
}

function settle(settings: Inherited) {
  return {
    enabled: settings.enabled,
    // R2.6: unset means asynchronous.
    synchronous: settings.synchronous ?? false,
    timeoutSeconds: settings.timeoutSeconds,
    guidanceKey: settings.guidanceKey,
    lane: settings.lane,
    mutates: settings.mutates,
  };
}

/** The meta-parameter an argument declaration may name (SPEC §2 compatibility). */
export const WORKING_DIRECTORY = 'working_directory';

/**
 * Meta-parameters the Rust ahma's files may declare as arguments (its META_PARAMS): each such
 * declaration is the meta-parameter, never an argument of the command (SPEC §2 compatibility).
 */
export const DECLARABLE_META_PARAMETERS: ReadonlySet<string> = new Set([
  WORKING_DIRECTORY,
  'timeout_seconds',
  'execution_mode',
]);

function isWorkingDirectory(parameter: ArgumentDefinition): boolean {
  return parameter.name === WORKING_DIRECTORY;
}

function isDeclaredMetaParameter(parameter: ArgumentDefinition): boolean {
  return DECLARABLE_META_PARAMETERS.has(parameter.name);
}

/** Shells that, given no "-c", would read their first argument as a script file. */
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash']);

/** The program that may start a shell found on PATH (`/usr/bin/env bash`). */
const ENV = 'env';

/** Shell options that take the next word as their value (a file for the long ones). */
const VALUE_OPTIONS = new Set(['--rcfile', '--init-file']);

/**
 * What a `command` starting a shell does with the words after it:
 * - `none`: it does not start a shell (directly or through `env SHELL`);
 * - `script`: it gives the shell a script, as a `-c` string (`bash -c`, `sh -ec`) or a file named
 *   in `command` itself (`bash note.sh`), so it runs as written;
 * - `bare`: only the shell and flags (`sh`, `/usr/bin/env bash`, `bash --norc`, `sh -e`): the
 *   shell would run the first word after it, a subcommand or an agent's value, as a script file
 *   from the working directory. Such a tool runs each leaf's first subcommand word as the
 *   program instead, with argv; the shell and its flags are not used (see isBareShell);
 * - `unsafe`: the same danger in a spelling that cannot be read as a bare shell (options taking
 *   a value, `--`, `env` with its own arguments): the file is refused.
 */
export type ShellCommandKind =
  | { readonly kind: 'none' | 'script' | 'bare' }
  | { readonly kind: 'unsafe'; readonly reason: string };

export function shellCommandKind(command: readonly string[]): ShellCommandKind {
  const [program, ...rest] = command;
  if (program === undefined) return { kind: 'none' };
  let options: readonly string[];
  if (SHELLS.has(basename(program))) {
    options = rest;
  } else if (basename(program) === ENV) {
    const at = rest.findIndex((word) => SHELLS.has(basename(word)));
    if (at === -1) return { kind: 'none' };
    if (at > 0) {
      return { kind: 'unsafe', reason: `"${program}" has its own arguments before the shell` };
    }
    options = rest.slice(1);
  } else {
    return { kind: 'none' };
  }
  let valueOption: string | undefined;
  for (let index = 0; index < options.length; index++) {
    const word = options[index] ?? '';
    if (runsString(word)) return { kind: 'script' };
    if (word === '--') return { kind: 'unsafe', reason: '"--" makes the next word a script file' };
    if (!/^[-+]/.test(word)) return { kind: 'script' };
    if (VALUE_OPTIONS.has(word) || /^[-+][A-Za-z]*[oO]$/.test(word)) {
      valueOption ??= word;
      index++;
    }
  }
  return valueOption === undefined
    ? { kind: 'bare' }
    : { kind: 'unsafe', reason: `"${valueOption}" takes a value` };
}

/** `-c` itself or a short-option cluster holding it (`-ec`); long forms (`--command`) too. */
function runsString(word: string): boolean {
  return /^-[A-Za-z]*c[A-Za-z]*$/.test(word) || word.startsWith('--command');
}

function basename(word: string): string {
  return word.split('/').at(-1) ?? '';
}

/** Whether `word` (a program name or path) is a shell or `env`, which could start one. */
export function isShellOrEnv(word: string): boolean {
  return SHELLS.has(basename(word)) || basename(word) === ENV;
}

/**
 * A `command` that is a bare shell (`sh`, `/bin/bash`, `/usr/bin/env bash`, `bash --norc`; no
 * `-c`, no script): the Rust ahma's file tools use `sh` to group programs (`ls`, `grep`) under
 * one definition. Each leaf then runs its first subcommand word as the program, with argv; no
 * value ever reaches a shell.
 */
export function isBareShell(command: readonly string[]): boolean {
  return shellCommandKind(command).kind === 'bare';
}

/** Splits `command` into the executable and its fixed leading arguments. */
export function splitCommand(command: string): string[] {
  return command
    .trim()
    .split(/\s+/)
    .filter((token) => token.length > 0);
}

/**
 * The description an agent sees: the async guidance for an asynchronous tool (R2.4: always, even
 * when a guidance_key selects another block), then the selected guidance block, then the author's
 * text, then the definition's hints.
 */
export function describeLeaf(leaf: ToolLeaf, guidance: GuidanceBlocks): string {
  const keys = new Set<string>();
  if (!leaf.synchronous) keys.add(ASYNC_GUIDANCE_KEY);
  if (leaf.guidanceKey !== undefined) keys.add(leaf.guidanceKey);
  const blocks = [...keys].flatMap((key) => guidance[key] ?? []);
  const hints = leaf.hints === undefined ? [] : [describeHints(leaf.hints)];
  return [...blocks, leaf.baseDescription, ...hints.filter((text) => text !== '')].join('\n\n');
}
