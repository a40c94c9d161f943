// Checks that a schema cannot express, on one schema-valid definition: names, argument
// declarations, inheritance and sequence shape. Cross-file checks live in definition-set.ts.
import { diagnostic, jsonPointer, warning, type Diagnostic, type Report } from './diagnostic.js';
import {
  DECLARABLE_META_PARAMETERS,
  DEFAULT_SEGMENT,
  isShellOrEnv,
  SEQUENCE_COMMAND,
  shellCommandKind,
  splitCommand,
  WORKING_DIRECTORY,
  type ToolLeaf,
} from './flatten.js';
import { isMetaParameter } from './input-schema.js';
import { checkLivelog } from './livelog-checks.js';
import { article } from './schema-check.js';
import { RESERVED_TOOL_NAMES } from './reserved.js';
import type { ArgumentDefinition, SubcommandDefinition, ToolDefinition } from './schema.js';

/** Longest MCP tool name produced; several clients refuse longer ones. */
export const MAX_TOOL_NAME_LENGTH = 64;

export function checkDefinition(
  file: string,
  definition: ToolDefinition,
  leaves: readonly ToolLeaf[],
): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const report: Report = (pointer, message, hint, severity = 'error') =>
    diagnostics.push((severity === 'error' ? diagnostic : warning)(file, pointer, message, hint));

  checkNames(definition, leaves, report);
  checkSequenceShape(definition, report);
  checkShellCommand(definition, leaves, report);
  checkLivelog(definition, report);
  checkSiblings(definition.subcommand, '', report);
  walkSubcommands(definition.subcommand, [], (sub, pointer) =>
    checkSubcommand(sub, pointer, report),
  );
  for (const leaf of leaves) checkLeafDescription(leaf, report);
  return diagnostics;
}

function checkNames(definition: ToolDefinition, leaves: readonly ToolLeaf[], report: Report): void {
  if (RESERVED_TOOL_NAMES.has(definition.name)) {
    report('/name', `"${definition.name}" is the name of a built-in tool`, 'choose another name');
  }
  const seen = new Map<string, string>();
  for (const leaf of leaves) {
    const namePointer = leaf.pointer === '' ? '/name' : `${leaf.pointer}/name`;
    const first = seen.get(leaf.name);
    if (first !== undefined) {
      report(
        namePointer,
        `${namePointer} produces the tool name "${leaf.name}", as ${first} does`,
        'tool names join the subcommand path with "_" and drop "default" segments; rename one of them',
      );
    }
    seen.set(leaf.name, namePointer);
    if (leaf.name !== definition.name && RESERVED_TOOL_NAMES.has(leaf.name)) {
      report(namePointer, `produces "${leaf.name}", the name of a built-in tool`, 'rename it');
    }
    if (leaf.name.length > MAX_TOOL_NAME_LENGTH) {
      report(
        namePointer,
        `produces the tool name "${leaf.name}" (${leaf.name.length} characters)`,
        `MCP clients accept at most ${MAX_TOOL_NAME_LENGTH}; shorten the names on this path`,
      );
    }
  }
}

/**
 * A shell given no script runs its first argument as a script FILE from the working directory (a
 * planted `ls`, not /bin/ls). A spelling that cannot safely be read as a bare shell is refused.
 * A livelog tool does not run `command` (it runs its source), so it is not checked.
 */
function checkShellCommand(
  definition: ToolDefinition,
  leaves: readonly ToolLeaf[],
  report: Report,
): void {
  if (definition.tool_type === 'livelog') return;
  const shell = shellCommandKind(splitCommand(definition.command));
  if (shell.kind === 'bare') {
    checkBareShellLeaves(definition, leaves, report);
    return;
  }
  if (shell.kind !== 'unsafe') return;
  report(
    '/command',
    `"${definition.command}" starts a shell that would run its first argument as a script file (${shell.reason})`,
    'use the shell alone ("sh", "/usr/bin/env bash") to run each subcommand as its own program with argv, or give it a script: "-c" or a script file in "command"',
  );
}

/**
 * A bare-shell tool runs each leaf's first subcommand word as the program. A leaf without one
 * (a "default" leaf, or a tool without subcommands) would run the shell itself with the agent's
 * values as its arguments (an option "-c" made it a shell string), and so would a program word
 * that is itself a shell or env: both are refused.
 */
function checkBareShellLeaves(
  definition: ToolDefinition,
  leaves: readonly ToolLeaf[],
  report: Report,
): void {
  if (definition.subcommand === undefined) {
    report(
      '/command',
      `a bare shell ("${definition.command}") without subcommands has no program to run`,
      'name the program in "command", or add subcommands named after the programs they run (ls, grep)',
    );
    return;
  }
  for (const leaf of leaves) {
    if (leaf.sequence !== undefined) continue;
    const program = leaf.subcommandPath[0];
    if (program === undefined) {
      report(
        `${leaf.pointer}/name`,
        'this leaf of a bare-shell tool has no program to run: its subcommand path is empty',
        'name the subcommand after the program it runs (a "default" leaf runs the shell itself)',
      );
    } else if (isShellOrEnv(program)) {
      // The subcommand that declares the program word: the first one on the path not "default".
      const depth = leaf.declaredPath.findIndex((name) => name !== DEFAULT_SEGMENT) + 1;
      const at = leaf.pointer
        .split('/')
        .slice(0, 2 * depth + 1)
        .join('/');
      report(
        `${at}/name`,
        `this leaf of a bare-shell tool runs "${program}", which is a shell or env, as its program`,
        'a bare-shell tool runs programs with argv; use the built-in sandboxed_shell for shell scripts',
      );
    }
  }
}

function checkSequenceShape(definition: ToolDefinition, report: Report): void {
  const command = splitCommand(definition.command);
  const isSequenceTool = command[0] === SEQUENCE_COMMAND;
  if (isSequenceTool && command.length > 1) {
    report('/command', '"sequence" takes no arguments', 'put arguments in the steps');
  }
  if (!isSequenceTool && definition.sequence !== undefined) {
    report(
      '/sequence',
      'a top-level sequence needs "command": "sequence"',
      'set "command" to "sequence", or move the steps into a subcommand',
    );
  }
  if (definition.step_delay_ms !== undefined && definition.sequence === undefined) {
    report(
      '/step_delay_ms',
      'step_delay_ms without a sequence has no effect',
      'remove it',
      'warning',
    );
  }
  if (!isSequenceTool) return;

  const leaves: { sub: SubcommandDefinition; pointer: string }[] = [];
  walkSubcommands(definition.subcommand, [], (sub, pointer) => {
    if (sub.subcommand === undefined) leaves.push({ sub, pointer });
  });
  const withoutSteps = leaves.filter(({ sub }) => sub.sequence === undefined);
  if (definition.sequence === undefined) {
    if (leaves.length === 0) {
      report('', 'a sequence tool needs "sequence" steps', 'add a "sequence" array of steps');
    }
    for (const { pointer } of withoutSteps) {
      report(pointer, 'this leaf of a sequence tool has no steps', 'give it a "sequence" array');
    }
  } else if (withoutSteps.length > 1) {
    report(
      '/subcommand',
      'a top-level sequence can be named by one leaf only',
      'keep one leaf to name the tool and declare its parameters, or give each leaf its own "sequence"',
    );
  }
}

function checkSubcommand(sub: SubcommandDefinition, pointer: string, report: Report): void {
  checkSiblings(sub.subcommand, pointer, report);

  if (sub.subcommand !== undefined) {
    // Keys that only a leaf uses would be silently ignored on a branch.
    const leafOnly = [
      'options',
      'positional_args',
      'positional_args_first',
      'sequence',
      'step_delay_ms',
    ] as const;
    for (const key of leafOnly) {
      if (sub[key] !== undefined) {
        report(
          `${pointer}/${key}`,
          `"${key}" on a subcommand that has nested subcommands is never used`,
          'move it to the leaf subcommands',
        );
      }
    }
    return;
  }
  if (sub.step_delay_ms !== undefined && sub.sequence === undefined) {
    report(
      `${pointer}/step_delay_ms`,
      'step_delay_ms without a sequence has no effect',
      'remove it',
      'warning',
    );
  }
  checkArguments(sub, pointer, report);
}

function checkSiblings(
  subs: readonly SubcommandDefinition[] | undefined,
  pointer: string,
  report: Report,
): void {
  const names = new Set<string>();
  subs?.forEach((child, index) => {
    if (names.has(child.name)) {
      report(`${pointer}/subcommand/${index}/name`, `duplicate subcommand "${child.name}"`);
    }
    names.add(child.name);
  });
}

function checkArguments(sub: SubcommandDefinition, pointer: string, report: Report): void {
  const names = new Map<string, string>();
  const aliases = new Map<string, string>();
  const lists = [
    ['options', sub.options ?? []],
    ['positional_args', sub.positional_args ?? []],
  ] as const;
  for (const [list, parameters] of lists) {
    parameters.forEach((parameter, index) => {
      const at = `${pointer}/${list}/${index}`;
      const first = names.get(parameter.name);
      if (first !== undefined) {
        report(`${at}/name`, `duplicate argument name "${parameter.name}" (first at ${first})`);
      }
      names.set(parameter.name, at);
      if (parameter.name === WORKING_DIRECTORY) {
        checkWorkingDirectory(parameter, at, report);
        return;
      }
      if (DECLARABLE_META_PARAMETERS.has(parameter.name)) {
        reportDeclaredMetaParameter(parameter.name, at, report);
        return;
      }
      if (isMetaParameter(parameter.name)) {
        report(
          `${at}/name`,
          `"${parameter.name}" is a meta-parameter that is never passed to the command`,
          'rename the argument',
        );
      }
      if (parameter.alias !== undefined) {
        const earlier = aliases.get(parameter.alias);
        if (earlier !== undefined) {
          report(`${at}/alias`, `alias "${parameter.alias}" is already used at ${earlier}`);
        }
        aliases.set(parameter.alias, at);
      }
      checkArgument(parameter, at, list === 'positional_args', report);
    });
  }
  checkPositionalOrder(sub.positional_args ?? [], `${pointer}/positional_args`, report);
  if (sub.positional_args_first === true) {
    sub.positional_args?.forEach((parameter, index) => {
      if (parameter.after_double_dash === true) {
        report(
          `${pointer}/positional_args/${String(index)}/after_double_dash`,
          'after_double_dash with positional_args_first would end the options before the options',
          'drop one of the two',
        );
      }
    });
  }
}

/** Keys a `working_directory` declaration may carry: it only describes the meta-parameter. */
const WORKING_DIRECTORY_KEYS = new Set(['name', 'type', 'description', 'required', 'format']);

/**
 * A declared `working_directory` is the meta-parameter (SPEC §2 compatibility): a string, resolved
 * inside the scope like the undeclared one. Keys that would make it a value for the command are
 * mistakes: it is never passed on.
 */
function checkWorkingDirectory(parameter: ArgumentDefinition, at: string, report: Report): void {
  if (parameter.type !== 'string') {
    report(
      `${at}/type`,
      `working_directory is the meta-parameter and takes a string, not "${parameter.type}"`,
      'set "type": "string"',
    );
  }
  for (const key of Object.keys(parameter)) {
    if (!WORKING_DIRECTORY_KEYS.has(key)) {
      report(
        `${at}/${key}`,
        `"${key}" has no effect on working_directory, the meta-parameter that is never passed to the command`,
        'remove it, or rename the argument if the command should receive it',
      );
    }
  }
}

/** What each meta-parameter the Rust ahma's files declare as an argument does instead. */
const DECLARED_META_EFFECT: Readonly<Record<string, string>> = {
  timeout_seconds: "sets this call's timeout",
  execution_mode: 'chooses whether this call blocks',
};

/**
 * A declared `timeout_seconds` or `execution_mode` (upstream's git.json declares the first on push,
 * pull and fetch) is the meta-parameter, as upstream treats it: every tool takes it, with Ahma's own
 * schema, so the declaration changes nothing and is never passed to the program.
 */
function reportDeclaredMetaParameter(name: string, at: string, report: Report): void {
  report(
    `${at}/name`,
    `"${name}" is the meta-parameter: it ${DECLARED_META_EFFECT[name] ?? 'steers the call'} and is not passed to the program`,
    `every tool takes "${name}" without declaring it; remove the declaration, or rename it if the program should get the value`,
    'warning',
  );
}

function checkArgument(
  parameter: ArgumentDefinition,
  at: string,
  positional: boolean,
  report: Report,
): void {
  const { type, items } = parameter;
  if (type !== 'array' && items !== undefined) {
    report(`${at}/items`, `"items" only applies to "array" arguments, not "${type}"`);
  }
  const elementType = type === 'array' ? items?.type : type;
  const pathFormat = parameter.format === 'path' || items?.format === 'path';
  if (pathFormat && elementType !== 'string') {
    report(
      parameter.format === 'path' ? `${at}/format` : `${at}/items/format`,
      `format "path" applies to string values, not "${type === 'array' ? `array of ${elementType ?? '?'}` : type}"`,
      'use it on a "string" argument or an array of strings',
    );
  }
  if (parameter.enum !== undefined) {
    if (type === 'array') {
      report(`${at}/enum`, 'an array argument lists its allowed values in "items.enum"');
    } else {
      parameter.enum.forEach((value, index) => {
        if (!matchesType(value, type)) {
          report(`${at}/enum/${index}`, `${JSON.stringify(value)} is not ${article(type)}`);
        }
      });
    }
  }
  items?.enum?.forEach((value, index) => {
    if (!matchesType(value, items.type)) {
      report(`${at}/items/enum/${index}`, `${JSON.stringify(value)} is not ${article(items.type)}`);
    }
  });
  if (parameter.default !== undefined) checkDefault(parameter, at, report);
  if (parameter.file_arg === true && type !== 'string') {
    report(`${at}/file_arg`, `file_arg applies to "string" arguments, not "${type}"`);
  }
  if (parameter.file_flag !== undefined) {
    if (parameter.file_arg !== true) {
      report(`${at}/file_flag`, 'file_flag only applies with "file_arg": true');
    } else if (positional) {
      report(`${at}/file_flag`, 'a positional argument takes no flag', 'make it an option');
    }
  }
  if (parameter.joined === true) {
    const refusal = joinedRefusal(parameter, positional);
    if (refusal !== undefined) report(`${at}/joined`, refusal.message, refusal.hint);
  }
  if (!positional && parameter.after_double_dash !== undefined) {
    report(
      `${at}/after_double_dash`,
      'after_double_dash applies to positional arguments',
      'move it to positional_args',
    );
  }
  if (type === 'boolean' && parameter.accepts_options !== undefined) {
    report(`${at}/accepts_options`, 'a boolean option has no value', 'drop "accepts_options"');
  }
  if (positional && parameter.alias !== undefined) {
    report(`${at}/alias`, 'a positional argument takes no alias', 'make it an option');
  }
  if (positional && type === 'boolean') {
    report(`${at}/type`, 'a boolean cannot be a positional argument', 'make it an option');
  }
}

/** Why `joined` cannot apply to this argument, if it cannot. */
function joinedRefusal(
  parameter: ArgumentDefinition,
  positional: boolean,
): { message: string; hint: string } | undefined {
  if (positional)
    return { message: 'a positional argument has no flag to join', hint: 'make it an option' };
  if (parameter.type === 'boolean') {
    return { message: 'a boolean option has no value to join', hint: 'drop "joined"' };
  }
  if (parameter.alias !== undefined) {
    return {
      message: 'a joined value goes with the long flag ("--name=value"), not an alias',
      hint: 'drop "alias"',
    };
  }
  if (parameter.file_flag !== undefined) {
    return { message: 'a joined value cannot follow file_flag', hint: 'drop one of the two' };
  }
  return undefined;
}

function checkDefault(parameter: ArgumentDefinition, at: string, report: Report): void {
  const value = parameter.default;
  const values = parameter.type === 'array' ? value : [value];
  const elementType = parameter.type === 'array' ? parameter.items?.type : parameter.type;
  const allowed = parameter.type === 'array' ? parameter.items?.enum : parameter.enum;
  if (!Array.isArray(values) || elementType === undefined) {
    report(`${at}/default`, `the default must be ${article(parameter.type)}`);
    return;
  }
  for (const element of values as unknown[]) {
    if (!matchesType(element, elementType)) {
      report(
        `${at}/default`,
        `the default ${JSON.stringify(value)} is not of type ${parameter.type}`,
      );
      return;
    }
    if (allowed !== undefined && !allowed.includes(element as string | number | boolean)) {
      report(
        `${at}/default`,
        `the default ${JSON.stringify(element)} is not one of the enum values`,
      );
      return;
    }
  }
}

function checkPositionalOrder(
  positionals: readonly ArgumentDefinition[],
  pointer: string,
  report: Report,
): void {
  let firstOptional: number | undefined;
  positionals.forEach((parameter, index) => {
    const required = parameter.required === true;
    if (!required && firstOptional === undefined) firstOptional = index;
    if (required && firstOptional !== undefined) {
      report(
        `${pointer}/${index}`,
        `required positional "${parameter.name}" follows optional positional at index ${firstOptional}`,
        'put required positionals first: an omitted optional one would shift it',
      );
    }
    if (parameter.type === 'array' && index < positionals.length - 1) {
      report(
        `${pointer}/${index}`,
        `array positional "${parameter.name}" is not the last positional`,
        'its elements would run into the next positional; move it last',
      );
    }
  });
}

// Words that promise the opposite of how the leaf actually runs. A description that contradicts
// the behaviour misleads the agent into waiting for a push that never comes (or the reverse). It
// is a warning: the wording can be read more than one way, and upstream has no such check.
const promisesBackground =
  /\b(runs? in the background|in the background|asynchronous(ly)?|returns? an? operation[ _]id|result (is|will be) pushed)\b/i;
const promisesBlocking =
  /\b(synchronous(ly)?|blocks? until|waits? (until|for) (it|the command) (to )?(finish|complete)s?)\b/i;

// A contrast or a negation describes something else ("unlike tasks which run asynchronously",
// "does not block"): from such a word to the end of its sentence is not a promise about this tool.
const contrast =
  /\b(unlike|rather than|instead of|as opposed to|in contrast to|compared (to|with)|whereas|not|cannot|never|without|no longer|\w+n't)\b[^.;!?\n]*/gi;

function checkLeafDescription(leaf: ToolLeaf, report: Report): void {
  const pointer = `${leaf.pointer}/description`;
  const promises = leaf.baseDescription.replace(contrast, ' ');
  if (leaf.synchronous && promisesBackground.test(promises)) {
    report(
      pointer,
      "this synchronous tool's description promises background work",
      'reword it, or remove "synchronous": true',
      'warning',
    );
  }
  if (!leaf.synchronous && promisesBlocking.test(promises)) {
    report(
      pointer,
      "this asynchronous tool's description promises to block until done",
      'reword it, or set "synchronous": true',
      'warning',
    );
  }
}

function walkSubcommands(
  subs: readonly SubcommandDefinition[] | undefined,
  path: (string | number)[],
  visit: (sub: SubcommandDefinition, pointer: string) => void,
): void {
  subs?.forEach((sub, index) => {
    const here = [...path, 'subcommand', index];
    visit(sub, jsonPointer(here));
    walkSubcommands(sub.subcommand, here, visit);
  });
}

function matchesType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    default:
      return false;
  }
}
