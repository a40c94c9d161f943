// The MTDF tool file of a discovered interface (run/walk.ts): one subcommand per subcommand the
// help listed, nested as the program nests them; options with their types, short aliases, choices
// and `format: "path"`; positionals with `required` and arrays for repeated ones. The file must
// validate: an argument Ahma cannot take as the help spells it (a name that clashes with a
// meta-parameter or another argument, say) is left out and said in the notes.
import { basename } from 'node:path';
import { DocumentChecker, META_PARAMETER_PROPERTIES } from '@ahma/core';
import type { HelpOption, HelpPositional } from '../parse/model.js';
import type { Discovered } from '../run/walk.js';

/** An MTDF argument (the subset written here). */
interface Argument {
  name: string;
  type: 'string' | 'boolean' | 'integer' | 'number' | 'array';
  description?: string;
  alias?: string;
  required?: boolean;
  format?: 'path';
  enum?: string[];
  items?: { type: 'string' | 'integer' | 'number'; format?: 'path'; enum?: string[] };
  joined?: boolean;
}

interface Subcommand {
  name: string;
  description: string;
  options?: Argument[];
  positional_args?: Argument[];
  subcommand?: Subcommand[];
}

export interface WrittenDefinition {
  /** The MTDF document, ready for JSON.stringify. */
  readonly definition: Record<string, unknown>;
  /** What the file leaves out or could not read, one line each (the caller prints them). */
  readonly notes: readonly string[];
}

/** Options every program has that are no tool's business. */
const HELP_AND_VERSION = new Set(['help', 'version', 'h', 'V']);
const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const OPTION_NAME = /^-{0,2}[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const ALIAS = /^[A-Za-z0-9]$/;

/**
 * The tool file for `command` (as the agent's calls will run it: a name on PATH or a path), named
 * `name` (default: the program's base name).
 */
export function writeDefinition(
  discovered: Discovered,
  command: string,
  name = toolName(command),
): WrittenDefinition {
  const notes: string[] = [];
  const root = discovered.model;
  const leaves =
    discovered.children.length > 0
      ? discovered.children.map((child) => subcommandOf(child, notes))
      : [{ ...leafOf(discovered, notes), name: 'default' }];
  if (discovered.children.length > 0 && root.options.some((option) => !isHelp(option))) {
    notes.push(
      `${command}: its own options (before a subcommand) are not offered: MTDF passes options after the subcommand`,
    );
  }
  for (const line of root.unparsed) notes.push(`${command}: not read: ${line}`);
  const definition: Record<string, unknown> = {
    name,
    description: root.description ?? `${command}, as its --help describes it.`,
    command,
    availability_check: { command, args: [...discovered.helpArgs] },
    subcommand: leaves,
  };
  return { definition: validated(definition, notes), notes };
}

function subcommandOf(discovered: Discovered, notes: string[]): Subcommand {
  const name = discovered.path.at(-1) ?? 'default';
  for (const line of discovered.model.unparsed) {
    notes.push(`${discovered.path.join(' ')}: not read: ${line}`);
  }
  if (discovered.children.length > 0) {
    return {
      name,
      description: describe(discovered),
      subcommand: discovered.children.map((child) => subcommandOf(child, notes)),
    };
  }
  return leafOf(discovered, notes);
}

function leafOf(discovered: Discovered, notes: string[]): Subcommand {
  const where = discovered.path.join(' ') || 'the program';
  const taken = new Set<string>(Object.keys(META_PARAMETER_PROPERTIES));
  const options: Argument[] = [];
  for (const option of discovered.model.options) {
    if (isHelp(option)) continue;
    const argument = optionArgument(option);
    if (argument === undefined || taken.has(argument.name)) {
      const why =
        argument === undefined
          ? 'its name cannot be a parameter'
          : 'a meta-parameter or an option before it has its name';
      notes.push(`${where}: option ${spell(option)} left out (${why})`);
      continue;
    }
    taken.add(argument.name);
    options.push(argument);
  }
  const positionals: Argument[] = [];
  for (const positional of discovered.model.positionals) {
    const argument = positionalArgument(positional);
    if (argument === undefined || taken.has(argument.name)) {
      notes.push(
        `${where}: positional ${positional.name} left out (its name clashes or is not one)`,
      );
      continue;
    }
    taken.add(argument.name);
    positionals.push(argument);
  }
  return {
    name: discovered.path.at(-1) ?? 'default',
    description: describe(discovered),
    ...(options.length > 0 ? { options } : {}),
    ...(positionals.length > 0 ? { positional_args: positionals } : {}),
  };
}

function optionArgument(option: HelpOption): Argument | undefined {
  // An option is passed as --name, or verbatim when its name starts with `-` (find's -name).
  const name =
    option.long === undefined
      ? option.short === undefined
        ? undefined
        : `-${option.short}`
      : option.singleDash === true
        ? `-${option.long}`
        : option.long;
  if (name === undefined || !OPTION_NAME.test(name)) return undefined;
  const argument: Argument = { name, type: 'boolean' };
  if (option.description !== undefined) argument.description = option.description;
  const value = option.value;
  if (value !== undefined) {
    const scalar = {
      type: value.type,
      ...(value.path === true && value.type === 'string' ? { format: 'path' as const } : {}),
      ...(value.choices !== undefined && value.choices.length > 0 && value.type === 'string'
        ? { enum: [...value.choices] }
        : {}),
    };
    if (option.repeatable === true) {
      argument.type = 'array';
      argument.items = scalar;
    } else {
      Object.assign(argument, scalar);
    }
    // `--color[=WHEN]`: a value given apart would be taken for a positional.
    if (value.optional === true && option.long !== undefined) argument.joined = true;
  }
  if (
    option.short !== undefined &&
    option.long !== undefined &&
    option.singleDash !== true &&
    ALIAS.test(option.short) &&
    argument.joined !== true
  ) {
    argument.alias = option.short;
  }
  return argument;
}

function positionalArgument(positional: HelpPositional): Argument | undefined {
  const name = positional.name.replace(/[^A-Za-z0-9_-]/g, '_').replace(/^[_-]+/, '');
  if (!NAME.test(name)) return undefined;
  const path = positional.path === true ? { format: 'path' as const } : {};
  return {
    name,
    ...(positional.repeated
      ? { type: 'array' as const, items: { type: 'string' as const, ...path } }
      : { type: 'string' as const, ...path }),
    ...(positional.required ? { required: true } : {}),
    ...(positional.description === undefined ? {} : { description: positional.description }),
  };
}

/** The help's description of the command at this path, else its place. */
function describe(discovered: Discovered): string {
  return discovered.model.description ?? `${discovered.path.join(' ')} (from its --help).`;
}

function isHelp(option: HelpOption): boolean {
  return (
    (option.long !== undefined && HELP_AND_VERSION.has(option.long)) ||
    (option.long === undefined && option.short !== undefined && HELP_AND_VERSION.has(option.short))
  );
}

function spell(option: HelpOption): string {
  return option.long === undefined ? `-${option.short ?? '?'}` : `--${option.long}`;
}

/** A tool name from the program: its base name, with what MTDF names refuse made `_`. */
export function toolName(command: string): string {
  const base = basename(command.split(' ')[0] ?? command).replace(/[^A-Za-z0-9_-]/g, '_');
  return NAME.test(base) ? base : `tool_${base}`;
}

/**
 * The definition as the server will check it; each argument or subcommand a problem points at is
 * left out and noted, until none is left (a bounded number of rounds).
 */
function validated(definition: Record<string, unknown>, notes: string[]): Record<string, unknown> {
  const checker = new DocumentChecker({ compileInputSchemas: true });
  let current = definition;
  for (let round = 0; round < 20; round += 1) {
    const check = checker.checkDefinition('introspected.json', JSON.stringify(current));
    if (check.ok) return current;
    const pointers = [...new Set(check.diagnostics.map((d) => d.pointer))];
    const removable = pointers.filter((pointer) =>
      /\/(options|positional_args|subcommand)\/\d+/.test(pointer),
    );
    if (removable.length === 0) {
      throw new Error(
        `the written definition does not validate: ${check.diagnostics.map((d) => `${d.pointer} ${d.message}`).join('; ')}`,
      );
    }
    for (const diagnostic of check.diagnostics)
      notes.push(`left out ${diagnostic.pointer}: ${diagnostic.message}`);
    current = withoutPointers(current, removable);
  }
  throw new Error('the written definition does not validate after 20 rounds of leaving out');
}

/** `document` without the array items the pointers lie in (the deepest options/subcommand item). */
function withoutPointers(
  document: Record<string, unknown>,
  pointers: readonly string[],
): Record<string, unknown> {
  const copy = structuredClone(document);
  const targets = pointers.map((pointer) => {
    const parts = pointer.split('/').slice(1);
    let last = -1;
    parts.forEach((part, index) => {
      if (
        /^\d+$/.test(part) &&
        ['options', 'positional_args', 'subcommand'].includes(parts[index - 1] ?? '')
      )
        last = index;
    });
    return parts.slice(0, last + 1);
  });
  // Deepest and highest indexes first, so a removal does not shift the next one.
  targets.sort((a, b) => b.length - a.length || Number(b.at(-1)) - Number(a.at(-1)));
  const seen = new Set<string>();
  for (const target of targets) {
    const key = target.join('/');
    if (seen.has(key)) continue;
    seen.add(key);
    let parent: unknown = copy;
    for (const part of target.slice(0, -1)) parent = (parent as Record<string, unknown>)[part];
    if (Array.isArray(parent)) parent.splice(Number(target.at(-1)), 1);
  }
  return copy;
}
