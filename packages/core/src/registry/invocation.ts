// A registered command as a tool: its input schema, and a call's argv. Arguments are passed in
// their declared order, one argv element each (instant-mcp passed them in random map order), and
// nothing is ever interpreted by a shell.
import { resolvePathInScope, resolveWorkingDirectory } from '../argv/paths.js';
import { META_PARAMETER_PROPERTIES } from '../definition/input-schema.js';
import type { JsonSchema } from '../definition/json-schema.js';
import { AhmaError } from '../errors.js';
import { timeoutSeconds, type RegisteredArgument, type RegisteredCommand } from './command.js';
import { resolveExecutable, type ExecLookup } from './exec.js';

/** The command's MCP inputSchema: its arguments in declared order, then the meta-parameters. */
export function registeredInputSchema(command: RegisteredCommand): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, argument] of Object.entries(command.args ?? {})) {
    properties[name] = {
      type: argument.type,
      ...(argument.description === undefined ? {} : { description: argument.description }),
      ...(argument.format === undefined ? {} : { format: argument.format }),
    };
    if (argument.required === true) required.push(name);
  }
  Object.assign(properties, META_PARAMETER_PROPERTIES);
  return {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

export interface RegisteredInvocation {
  /** The resolved executable, then the arguments. */
  readonly argv: string[];
  /** Real path of the working directory, inside the scope. */
  readonly cwd: string;
  /** The call's `timeout_seconds`, else the command's timeout; undefined: the server default. */
  readonly timeoutSeconds: number | undefined;
}

/**
 * A validated call's argv, working directory and timeout. Throws EXEC_NOT_FOUND when the
 * executable is gone (EC3), PATH_OUTSIDE_SCOPE for a path argument outside the scope, and
 * ARGV_INVALID for a positional value the program would read as an option.
 */
export async function prepareRegisteredCall(
  command: RegisteredCommand,
  args: Readonly<Record<string, unknown>>,
  lookup: ExecLookup,
): Promise<RegisteredInvocation> {
  const workingDirectory = args['working_directory'];
  const cwd = await resolveWorkingDirectory(
    typeof workingDirectory === 'string' ? workingDirectory : undefined,
    lookup.scope,
  );
  const argv = [await resolveExecutable(command.exec, lookup)];
  for (const [name, argument] of Object.entries(command.args ?? {})) {
    const value = Object.hasOwn(args, name) ? args[name] : undefined;
    if (value === undefined || value === null) continue;
    const text =
      argument.format === 'path'
        ? await resolvePathInScope(String(value), cwd, lookup.scope, name)
        : String(value);
    argv.push(...argumentArgv(name, argument, value, text));
  }
  const callTimeout = args['timeout_seconds'];
  return {
    argv,
    cwd,
    timeoutSeconds:
      typeof callTimeout === 'number'
        ? callTimeout
        : command.timeout === undefined
          ? undefined
          : timeoutSeconds(command.timeout),
  };
}

function argumentArgv(
  name: string,
  argument: RegisteredArgument,
  value: unknown,
  text: string,
): string[] {
  if (argument.flag !== undefined) {
    if (typeof value === 'boolean') return value ? [argument.flag] : [];
    // After its flag a value is the flag's, whatever it looks like.
    return [argument.flag, text];
  }
  // A positional the program would read as an option (`--output=FILE`): refused, like MTDF's.
  if (text.startsWith('-')) {
    throw new AhmaError(
      'ARGV_INVALID',
      `argument "${name}": ${JSON.stringify(text)} starts with "-", so the program would read it as an option; give the argument a "flag" to pass such values`,
    );
  }
  return [text];
}
