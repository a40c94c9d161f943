// JSON arguments → argv (SPEC §2). Pure: every value becomes exactly one argv element and nothing
// is ever interpreted by a shell. Path resolution and file_arg temp files happen before this, in
// prepare.ts, which hands over the already-substituted values.
import type { ToolLeaf } from '../definition/flatten.js';
import type { ArgumentDefinition } from '../definition/schema.js';
import { AhmaError } from '../errors.js';

export type ArgvLeaf = Pick<
  ToolLeaf,
  'command' | 'subcommandPath' | 'options' | 'positionals' | 'positionalsFirst'
>;

/**
 * The command line for a leaf: command tokens, the subcommand path, then options in declared order
 * and positionals (or positionals first). Arguments not declared by the leaf, meta-parameters
 * included, are never passed. Throws ARGV_INVALID for a value the program would take as an
 * option (see refuseOptionLike).
 */
export function buildArgv(leaf: ArgvLeaf, args: Readonly<Record<string, unknown>>): string[] {
  const options = leaf.options.flatMap((option) => optionArgv(option, valueOf(option, args)));
  let dashed = false;
  const positionals = leaf.positionals.flatMap((positional) => {
    const values = elements(valueOf(positional, args));
    // "--" once, before the first after_double_dash positional that has a value; everything
    // after it is data to the program, whatever it looks like.
    if (positional.after_double_dash === true && values.length > 0 && !dashed) {
      dashed = true;
      return ['--', ...values];
    }
    if (!dashed && positional.accepts_options !== true) refuseOptionLike(positional, values);
    return values;
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
  // null is a value: "nothing", even where a default would apply.
  return given === undefined ? parameter.default : given;
}

function optionArgv(option: ArgumentDefinition, value: unknown): string[] {
  if (value === undefined || value === null || value === false) return [];
  // Programs take the argument after a flag as its value whatever it looks like, except a few
  // (npm's parser re-reads a string option's "-x" value as an option, even in "--name=-x").
  if (option.accepts_options === false) refuseOptionLike(option, elements(value));
  if (option.file_arg === true && option.file_flag !== undefined)
    return [option.file_flag, String(value)];
  const flag = flagOf(option);
  if (value === true) return [flag];
  if (option.joined === true) return elements(value).map((element) => `${flag}=${element}`);
  return elements(value).flatMap((element) => [flag, element]);
}

/**
 * A value is data, but a program reads an argument starting with "-" as an option wherever it
 * comes (`git log --output=FILE` writes FILE). The callers decide when that can happen: a
 * positional not after "--" and not declaring accepts_options, an option declaring
 * `accepts_options: false`. Checked on the argv elements themselves, so numbers count by their
 * text ("-5") and substituted values by what replaced them: a path is absolute, a file_arg value a
 * temporary file's path, neither starts with "-".
 */
function refuseOptionLike(parameter: ArgumentDefinition, values: readonly string[]): void {
  const value = values.find((element) => element.startsWith('-'));
  if (value === undefined) return;
  throw new AhmaError(
    'ARGV_INVALID',
    `argument "${parameter.name}": ${quote(value)} starts with "-", so the program would read it as an option, not as a value; this argument's values may not start with "-" (pass flags through the tool's own parameters)`,
  );
}

/** A value for a message: JSON-quoted, and cut short so a huge one does not flood it. */
function quote(value: string): string {
  const MAX = 80;
  return JSON.stringify(value.length > MAX ? `${value.slice(0, MAX)}…` : value);
}

/** One argv element per scalar, one per array item; null and undefined give none. */
function elements(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value.flatMap((item: unknown) => elements(item));
  return [typeof value === 'string' ? value : JSON.stringify(value)];
}
