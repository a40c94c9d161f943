// JSON arguments → argv (SPEC §2). Pure: every value becomes exactly one argv element and nothing
// is ever interpreted by a shell. Path resolution and file_arg temp files happen before this, in
// prepare.ts, which hands over the already-substituted values.
import type { ToolLeaf } from '../definition/flatten.js';
import type { ArgumentDefinition } from '../definition/schema.js';

export type ArgvLeaf = Pick<
  ToolLeaf,
  'command' | 'subcommandPath' | 'options' | 'positionals' | 'positionalsFirst'
>;

/**
 * The command line for a leaf: command tokens, the subcommand path, then options in declared order
 * and positionals (or positionals first). Arguments not declared by the leaf, meta-parameters
 * included, are never passed.
 */
export function buildArgv(leaf: ArgvLeaf, args: Readonly<Record<string, unknown>>): string[] {
  const options = leaf.options.flatMap((option) => optionArgv(option, valueOf(option, args)));
  let dashed = false;
  const positionals = leaf.positionals.flatMap((positional) => {
    const values = elements(valueOf(positional, args));
    // "--" once, before the first after_double_dash positional that has a value.
    if (positional.after_double_dash !== true || values.length === 0 || dashed) return values;
    dashed = true;
    return ['--', ...values];
  });
  return [
    ...leaf.command,
    ...leaf.subcommandPath,
    ...(leaf.positionalsFirst ? [...positionals, ...options] : [...options, ...positionals]),
  ];
}

/** The flag an option is passed with: "-alias", the name verbatim when it starts with "-", else "--name". */
export function flagOf(option: ArgumentDefinition): string {
  if (option.alias !== undefined) return `-${option.alias}`;
  return option.name.startsWith('-') ? option.name : `--${option.name}`;
}

function valueOf(parameter: ArgumentDefinition, args: Readonly<Record<string, unknown>>): unknown {
  const given = Object.hasOwn(args, parameter.name) ? args[parameter.name] : undefined;
  return given ?? parameter.default;
}

function optionArgv(option: ArgumentDefinition, value: unknown): string[] {
  if (value === undefined || value === null || value === false) return [];
  if (option.file_arg === true && option.file_flag !== undefined)
    return [option.file_flag, String(value)];
  const flag = flagOf(option);
  if (value === true) return [flag];
  if (option.joined === true) return elements(value).map((element) => `${flag}=${element}`);
  return elements(value).flatMap((element) => [flag, element]);
}

/** One argv element per scalar, one per array item; null and undefined give none. */
function elements(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value.flatMap((item: unknown) => elements(item));
  return [typeof value === 'string' ? value : JSON.stringify(value)];
}
