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

  for (;;) {
    const tools = enabledTools(accepted);
    const rejected = new Set<CheckedDefinition>();
    for (const entry of accepted) {
      const found = checkSequences(entry, tools);
      if (found.length > 0) {
        diagnostics.push(...found);
        rejected.add(entry);
      }
    }
    if (rejected.size === 0) return { accepted, diagnostics };
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

/**
 * The tool a step calls: "<tool>_<subcommand>", with "default" (or no subcommand) meaning the tool.
 * Subcommand names may contain "_", and tool names join path segments with "_", so
 * `{"tool": "cargo", "subcommand": "nextest_run"}` names cargo_nextest_run whether nextest_run is one
 * word or nextest → run. When that tool does not exist, a `tool` that is already a flattened tool
 * name overlapping the subcommand path (the Rust ahma's docs write
 * `{"tool": "cargo_nextest", "subcommand": "nextest_run"}`) resolves to the tool they share.
 */
export function stepTarget(step: SequenceStep, isTool: (name: string) => boolean): string {
  const path = (step.subcommand ?? DEFAULT_SEGMENT)
    .split('_')
    .filter((segment) => segment !== DEFAULT_SEGMENT);
  const direct = [step.tool, ...path].join('_');
  if (path.length === 0 || isTool(direct)) return direct;
  const toolSegments = step.tool.split('_');
  for (let overlap = Math.min(toolSegments.length, path.length); overlap > 0; overlap--) {
    const shared = toolSegments.slice(-overlap).every((segment, i) => segment === path[i]);
    const merged = [...toolSegments, ...path.slice(overlap)].join('_');
    if (shared && isTool(merged)) return merged;
  }
  return direct;
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
    leaf.sequence.forEach((step, index) => {
      const at = `${leaf.sequencePointer}/${index}`;
      const report = (pointer: string, message: string, hint?: string) =>
        found.push(diagnostic(entry.file, pointer, message, hint));
      const target = stepTarget(step, (name) => tools.has(name));
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
      (step) =>
        parametersOf(
          stepTarget(step, (name) => tools.has(name)),
          tools,
        ) ?? [],
    ),
  );
  const lists = [
    ['options', leaf.options],
    ['positional_args', leaf.positionals],
  ] as const;
  return lists.flatMap(([key, parameters]) =>
    parameters.flatMap((parameter, index) =>
      taken.has(parameter.name)
        ? []
        : [
            diagnostic(
              file,
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
      const found = search(
        stepTarget(step, (candidate) => tools.has(candidate)),
        [...trail, name],
      );
      if (found !== undefined) return found;
    }
    return undefined;
  };
  const path = search(start, [origin.name]);
  return path?.join(' → ');
}
