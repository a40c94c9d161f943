// Checks across all the definitions that will be served together: unique names, guidance keys that
// exist, and sequence steps that name a real tool. A file failing any of them is rejected whole.
import { diagnostic, isError, jsonPointer, warning, type Diagnostic } from './diagnostic.js';
import type { ToolLeaf } from './flatten.js';
import type { GuidanceBlocks } from './guidance.js';
import { isMetaParameter } from './input-schema.js';
import { SHELL_TOOL_NAME } from './reserved.js';
import type { SequenceStep, SubcommandDefinition, ToolDefinition } from './schema.js';
import { closestMatch } from './suggest.js';
import { DEFAULT_SEGMENT } from './flatten.js';

/** A definition that passed its own checks, with the tools it produces. */
export interface CheckedDefinition {
  readonly file: string;
  readonly definition: ToolDefinition;
  readonly leaves: readonly ToolLeaf[];
}

export interface SetCheckResult {
  readonly accepted: CheckedDefinition[];
  readonly diagnostics: Diagnostic[];
}

/** Parameters of the built-in shell tool, which sequence steps may call. */
const SHELL_PARAMETERS = ['command'];

/**
 * Accepts definitions in order; a later file loses a name clash. Rejections can break another file's
 * sequence references, so reference checks repeat until nothing more is rejected.
 */
export function checkDefinitionSet(
  candidates: readonly CheckedDefinition[],
  guidance: GuidanceBlocks,
): SetCheckResult {
  const diagnostics: Diagnostic[] = [];
  let accepted = candidates.filter((entry) => {
    const found = [...checkGuidanceKeys(entry, guidance)];
    diagnostics.push(...found);
    return !found.some(isError);
  });
  accepted = acceptUniqueNames(accepted, diagnostics);

  // A file with only warnings stays and is checked again: its last round's warnings are reported.
  const warned = new Map<CheckedDefinition, Diagnostic[]>();
  for (;;) {
    const tools = enabledTools(accepted);
    const rejected = new Set<CheckedDefinition>();
    for (const entry of accepted) {
      const found = checkSequences(entry, tools);
      if (found.some(isError)) {
        diagnostics.push(...found);
        rejected.add(entry);
      } else {
        warned.set(entry, found);
      }
    }
    if (rejected.size === 0) {
      for (const entry of accepted) diagnostics.push(...(warned.get(entry) ?? []));
      return { accepted, diagnostics };
    }
    accepted = accepted.filter((entry) => !rejected.has(entry));
  }
}

function acceptUniqueNames(
  entries: readonly CheckedDefinition[],
  diagnostics: Diagnostic[],
): CheckedDefinition[] {
  const definitionOwner = new Map<string, string>();
  const toolOwner = new Map<string, string>();
  return entries.filter((entry) => {
    const found: Diagnostic[] = [];
    const owner = definitionOwner.get(entry.definition.name);
    if (owner !== undefined) {
      found.push(
        diagnostic(
          entry.file,
          '/name',
          `"${entry.definition.name}" is already defined in ${owner}`,
          'rename one of them',
        ),
      );
    }
    for (const leaf of entry.leaves) {
      const other = leaf.enabled ? toolOwner.get(leaf.name) : undefined;
      if (other !== undefined && other !== entry.file) {
        found.push(
          diagnostic(
            entry.file,
            leaf.pointer === '' ? '/name' : `${leaf.pointer}/name`,
            `produces the tool "${leaf.name}", which ${other} already produces`,
            'rename the definition or the subcommand',
          ),
        );
      }
    }
    if (found.length > 0) {
      diagnostics.push(...found);
      return false;
    }
    definitionOwner.set(entry.definition.name, entry.file);
    for (const leaf of entry.leaves) if (leaf.enabled) toolOwner.set(leaf.name, entry.file);
    return true;
  });
}

function* checkGuidanceKeys(
  entry: CheckedDefinition,
  guidance: GuidanceBlocks,
): Generator<Diagnostic> {
  const check = function* (key: string | undefined, pointer: string): Generator<Diagnostic> {
    if (key === undefined || key in guidance) return;
    const suggestion = closestMatch(key, Object.keys(guidance));
    // A warning: the tools work, their descriptions go without the block (the Rust ahma's files
    // name guidance built into it, such as "python_sync").
    yield warning(
      entry.file,
      pointer,
      `unknown guidance_key "${key}": the description goes without it`,
      suggestion === undefined
        ? `define it in tool_guidance.json; known keys: ${Object.keys(guidance).join(', ')}`
        : `did you mean "${suggestion}"?`,
    );
  };
  yield* check(entry.definition.guidance_key, '/guidance_key');
  const walk = function* (
    subs: readonly SubcommandDefinition[] | undefined,
    pointer: string,
  ): Generator<Diagnostic> {
    for (const [index, sub] of (subs ?? []).entries()) {
      const here = `${pointer}/subcommand/${index}`;
      yield* check(sub.guidance_key, `${here}/guidance_key`);
      yield* walk(sub.subcommand, here);
    }
  };
  yield* walk(entry.definition.subcommand, '');
}

function enabledTools(entries: readonly CheckedDefinition[]): Map<string, ToolLeaf> {
  const tools = new Map<string, ToolLeaf>();
  for (const entry of entries) {
    for (const leaf of entry.leaves) if (leaf.enabled) tools.set(leaf.name, leaf);
  }
  return tools;
}

/** How a sequence step resolved against the tools it may call. */
export type StepResolution =
  | { readonly kind: 'tool'; readonly name: string }
  /** No tool matches; `name` is the step as written ("sandboxed_shell" for the built-in). */
  | { readonly kind: 'missing'; readonly name: string }
  /** More than one tool matches (the file is refused); `name` is the first of `names`. */
  | { readonly kind: 'ambiguous'; readonly name: string; readonly names: readonly string[] };

/**
 * The tool a step calls, resolved against the leaves it may call (their produced names and their
 * declared subcommand paths), never by rewriting the step's text alone:
 * 1. "<tool>_<subcommand>" as written, equal to a produced tool name ("default", or no
 *    subcommand, means the tool itself). Produced names are unique, so this never is ambiguous.
 * 2. Otherwise a leaf whose declared path spells the step when some of its whole "default" path
 *    words are left out (`{"tool":"cargo","subcommand":"fmt_default"}` is cargo → fmt → default),
 *    or, for a `tool` that is already a flattened name overlapping the subcommand (the Rust ahma's
 *    docs write `{"tool":"cargo_nextest","subcommand":"nextest_run"}`), the name they share.
 * A "default" inside a subcommand name ("set_default") is never dropped: that named another leaf.
 */
export function resolveStep(step: SequenceStep, leaves: Iterable<ToolLeaf>): StepResolution {
  const subcommand = step.subcommand ?? DEFAULT_SEGMENT;
  const written = subcommand === DEFAULT_SEGMENT ? step.tool : `${step.tool}_${subcommand}`;
  const candidates = [...leaves];
  if (candidates.some((leaf) => leaf.name === written)) return { kind: 'tool', name: written };

  const spellings = new Set([written, ...overlapSpellings(step.tool, subcommand)]);
  const names = [
    ...new Set(
      candidates
        .filter((leaf) => declaredSpellings(leaf).some((spelling) => spellings.has(spelling)))
        .map((leaf) => leaf.name),
    ),
  ];
  const [first, ...others] = names;
  // As written: never the name of a tool that exists (step 1 would have found it), so a caller
  // looking the name up cannot run a tool the step did not name.
  if (first === undefined) return { kind: 'missing', name: written };
  return others.length === 0
    ? { kind: 'tool', name: first }
    : { kind: 'ambiguous', name: first, names };
}

/** The resolved tool's name; the step as written when none matches (see resolveStep). */
export function stepTarget(step: SequenceStep, leaves: Iterable<ToolLeaf>): string {
  return resolveStep(step, leaves).name;
}

/** `tool` merged with `subcommand` where a trailing run of tool words starts the subcommand. */
function overlapSpellings(tool: string, subcommand: string): string[] {
  if (subcommand === DEFAULT_SEGMENT) return [];
  const toolSegments = tool.split('_');
  const path = subcommand.split('_');
  const merged: string[] = [];
  for (let overlap = Math.min(toolSegments.length, path.length); overlap > 0; overlap--) {
    const shared = toolSegments.slice(-overlap).every((segment, i) => segment === path[i]);
    if (shared) merged.push([...toolSegments, ...path.slice(overlap)].join('_'));
  }
  return merged;
}

/** Every spelling of a leaf's name that keeps or drops each whole "default" path word. */
function declaredSpellings(leaf: ToolLeaf): string[] {
  let paths: string[][] = [[]];
  for (const word of leaf.declaredPath) {
    const kept = paths.map((path) => [...path, word]);
    paths = word === DEFAULT_SEGMENT ? [...kept, ...paths] : kept;
  }
  return paths.map((path) => [leaf.definitionName, ...path].join('_'));
}

/**
 * A disabled leaf's sequence never runs, so what is wrong with it only warns (upstream loads such
 * files without looking at their steps): a disabled file, or one whose tools are not offered, must
 * not fail validation because of the tools it would call.
 */
function sequenceProblem(
  file: string,
  enabled: boolean,
): (pointer: string, message: string, hint?: string) => Diagnostic {
  if (enabled) return (pointer, message, hint) => diagnostic(file, pointer, message, hint);
  return (pointer, message, hint) =>
    warning(
      file,
      pointer,
      message,
      `${hint === undefined ? '' : `${hint}; `}the tool is disabled, so the file still loads`,
    );
}

function checkSequences(
  entry: CheckedDefinition,
  tools: ReadonlyMap<string, ToolLeaf>,
): Diagnostic[] {
  const found: Diagnostic[] = [];
  const checked = new Set<string>();
  for (const leaf of entry.leaves) {
    if (leaf.sequence === undefined || leaf.sequencePointer === undefined) continue;
    found.push(...unusedSequenceParameters(entry.file, leaf, tools));
    if (checked.has(leaf.sequencePointer)) continue;
    checked.add(leaf.sequencePointer);
    // A top-level sequence is shared by the leaves that name it: an error if any of them runs.
    const enabled = entry.leaves.some(
      (other) => other.enabled && other.sequencePointer === leaf.sequencePointer,
    );
    const problem = sequenceProblem(entry.file, enabled);
    leaf.sequence.forEach((step, index) => {
      const at = `${leaf.sequencePointer}/${index}`;
      const report = (pointer: string, message: string, hint?: string) =>
        found.push(problem(pointer, message, hint));
      const resolution = resolveStep(step, tools.values());
      if (resolution.kind === 'ambiguous') {
        report(
          `${at}/tool`,
          `step matches more than one tool: ${resolution.names.map((name) => `"${name}"`).join(' and ')}`,
          'name the tool exactly: "tool" set to the full tool name, without "subcommand"',
        );
        return;
      }
      const target = resolution.name;
      const parameters = parametersOf(target, tools);
      if (parameters === undefined) {
        const suggestion = closestMatch(target, [...tools.keys(), SHELL_TOOL_NAME]);
        report(
          `${at}/tool`,
          `step calls "${target}", which is not a defined, enabled tool`,
          suggestion === undefined
            ? 'check "tool" and "subcommand"'
            : `did you mean "${suggestion}"?`,
        );
        return;
      }
      if (tools.get(target)?.livelog !== undefined) {
        report(
          `${at}/tool`,
          `step calls "${target}", a livelog tool, which runs until it is cancelled`,
          'start the monitor with its own call',
        );
        return;
      }
      const cycle = findCycle(target, leaf, tools);
      if (cycle !== undefined) {
        report(
          `${at}/tool`,
          `step calls "${target}", which leads back to this sequence (${cycle})`,
        );
        return;
      }
      for (const key of Object.keys(step.args ?? {})) {
        // Argument names are free-form: escape "/" and "~" so the pointer stays valid (RFC 6901).
        const argPointer = `${at}${jsonPointer(['args', key])}`;
        if (isMetaParameter(key)) {
          report(
            argPointer,
            `"${key}" is a meta-parameter; steps run with the caller's`,
            'remove it from the step',
          );
        } else if (!parameters.includes(key)) {
          const suggestion = closestMatch(key, parameters);
          report(
            argPointer,
            `"${target}" has no argument "${key}"`,
            suggestion === undefined
              ? `it takes: ${parameters.join(', ') || 'none'}`
              : `did you mean "${suggestion}"?`,
          );
        }
      }
    });
  }
  return found;
}

/**
 * A sequence's own parameters reach only the steps whose tools declare them (R10.3): one that no
 * step takes would be accepted from the agent and silently dropped.
 */
function unusedSequenceParameters(
  file: string,
  leaf: ToolLeaf,
  tools: ReadonlyMap<string, ToolLeaf>,
): Diagnostic[] {
  const taken = new Set(
    (leaf.sequence ?? []).flatMap(
      (step) => parametersOf(stepTarget(step, tools.values()), tools) ?? [],
    ),
  );
  const lists = [
    ['options', leaf.options],
    ['positional_args', leaf.positionals],
  ] as const;
  const problem = sequenceProblem(file, leaf.enabled);
  return lists.flatMap(([key, parameters]) =>
    parameters.flatMap((parameter, index) =>
      taken.has(parameter.name)
        ? []
        : [
            problem(
              `${leaf.pointer}/${key}/${String(index)}/name`,
              `no step of this sequence takes "${parameter.name}"; the agent's value would be dropped`,
              'remove it, or add a step whose tool declares it',
            ),
          ],
    ),
  );
}

function parametersOf(target: string, tools: ReadonlyMap<string, ToolLeaf>): string[] | undefined {
  if (target === SHELL_TOOL_NAME) return SHELL_PARAMETERS;
  const leaf = tools.get(target);
  return leaf === undefined ? undefined : [...leaf.options, ...leaf.positionals].map((p) => p.name);
}

/** A path of tool names from `start` back to `origin` through sequence steps, if one exists. */
function findCycle(
  start: string,
  origin: ToolLeaf,
  tools: ReadonlyMap<string, ToolLeaf>,
): string | undefined {
  const visited = new Set<string>();
  const search = (name: string, trail: string[]): string[] | undefined => {
    const leaf = tools.get(name);
    if (leaf === undefined) return undefined;
    if (
      leaf === origin ||
      (leaf.sequencePointer === origin.sequencePointer &&
        leaf.definitionName === origin.definitionName)
    ) {
      return [...trail, name];
    }
    if (visited.has(name) || leaf.sequence === undefined) return undefined;
    visited.add(name);
    for (const step of leaf.sequence) {
      const found = search(stepTarget(step, tools.values()), [...trail, name]);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  const path = search(start, [origin.name]);
  return path?.join(' → ');
}
