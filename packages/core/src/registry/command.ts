// A registered command (SPEC §8): the shape instant-mcp stores, checked field by field. Every way a
// command enters the registry (add_command, update_command, batch_exec, import_config, the registry
// file) goes through parseCommand, so what the registry holds is always valid.
import { MAX_TIMEOUT_SECONDS } from '../definition/schema.js';
import { isMetaParameter } from '../definition/input-schema.js';
import { AhmaError } from '../errors.js';

export const ARGUMENT_TYPES = ['string', 'number', 'integer', 'boolean'] as const;
export type ArgumentType = (typeof ARGUMENT_TYPES)[number];

/** One argument of a registered command; it reaches the executable as one argv element. */
export interface RegisteredArgument {
  readonly type: ArgumentType;
  readonly description?: string;
  readonly required?: boolean;
  /** Pass the value after this flag (`--out VALUE`; a boolean passes the flag alone when true). */
  readonly flag?: string;
  /** "path": resolved against the working directory and refused outside the sandbox scope. */
  readonly format?: 'path';
}

export interface RegisteredCommand {
  readonly name: string;
  /** The executable: absolute, relative to the sandbox scope (with a "/"), or a name on PATH. */
  readonly exec: string;
  /** Arguments in the order they are passed. */
  readonly args?: Readonly<Record<string, RegisteredArgument>>;
  readonly description?: string;
  /** Run in the background: the call answers with an operation id (SPEC §3). */
  readonly async?: boolean;
  /** "30s", "5m", "1h" or a sum such as "1h30m". */
  readonly timeout?: string;
}

/** FR4.1: command names; a tool name, so ASCII letters, digits and `_` only. */
// Never "__proto__" (assigned as a key it would set an object's prototype instead), nor digits only
// (a JavaScript object lists such keys first, so the file would lose the registration order).
export const COMMAND_NAME_PATTERN = /^(?!__proto__$)(?!\d+$)[A-Za-z0-9_]{1,128}$/;
/** Argument names: a letter or `_` first, so a JSON object keeps them in declared order. */
const ARGUMENT_NAME_PATTERN = /^(?!__proto__$)[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
const FLAG_PATTERN = /^-{1,2}[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const TIMEOUT_PATTERN = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

const COMMAND_FIELDS = ['name', 'exec', 'args', 'description', 'async', 'timeout'];
const ARGUMENT_FIELDS = ['type', 'description', 'required', 'flag', 'format'];

/** The seconds a timeout stands for; undefined when it is not one ("30s", "5m", "1h", "1h30m"). */
export function timeoutSeconds(timeout: string): number | undefined {
  const match = TIMEOUT_PATTERN.exec(timeout);
  if (match === null || timeout === '') return undefined;
  const [, hours = '0', minutes = '0', seconds = '0'] = match;
  return Number(hours) * 3600 + Number(minutes) * 60 + Number(seconds);
}

/**
 * The command `raw` describes, or COMMAND_INVALID naming every problem. Empty strings and
 * `false`/`{}` (what instant-mcp's exports hold for unset fields) mean unset, and are dropped.
 */
export function parseCommand(raw: unknown): RegisteredCommand {
  const problems: string[] = [];
  if (!isObject(raw)) throw invalid(undefined, ['a command is an object']);
  const name = raw['name'];
  const label = typeof name === 'string' ? name : undefined;
  for (const key of Object.keys(raw)) {
    if (!COMMAND_FIELDS.includes(key)) {
      problems.push(`unknown field "${key}" (fields: ${COMMAND_FIELDS.join(', ')})`);
    }
  }
  if (typeof name !== 'string' || !COMMAND_NAME_PATTERN.test(name)) {
    problems.push(
      `name ${JSON.stringify(typeof name === 'string' && name.length > 140 ? `${name.slice(0, 128)}…` : name)} is not a command name: 1–128 ASCII letters, digits or "_", not digits only`,
    );
  }
  const exec = raw['exec'];
  if (typeof exec !== 'string' || exec.trim() === '') {
    problems.push('exec is required: the executable to run (absolute, ./relative or on PATH)');
  } else if (exec.includes('\0')) problems.push('exec contains a NUL byte');
  const description = optionalString(raw, 'description', problems);
  const async = raw['async'];
  if (async !== undefined && typeof async !== 'boolean') problems.push('async is true or false');
  const timeout = optionalString(raw, 'timeout', problems);
  if (timeout !== undefined) {
    const seconds = timeoutSeconds(timeout);
    if (seconds === undefined || seconds <= 0) {
      problems.push(`timeout "${timeout}" is not a duration like "30s", "5m", "1h" or "1h30m"`);
    } else if (seconds > MAX_TIMEOUT_SECONDS) {
      problems.push(`timeout "${timeout}" exceeds the ${String(MAX_TIMEOUT_SECONDS)} s maximum`);
    }
  }
  const args = parseArguments(raw['args'], problems);
  if (problems.length > 0) throw invalid(label, problems);
  return {
    name: name as string,
    exec: exec as string,
    ...(args === undefined ? {} : { args }),
    ...(description === undefined ? {} : { description }),
    ...(async === true ? { async } : {}),
    ...(timeout === undefined ? {} : { timeout }),
  };
}

function parseArguments(
  raw: unknown,
  problems: string[],
): Record<string, RegisteredArgument> | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw)) {
    problems.push('args is an object: {"arg_name": {"type": "string", "required": true}}');
    return undefined;
  }
  const args: Record<string, RegisteredArgument> = {};
  const flags = new Set<string>();
  for (const [name, value] of Object.entries(raw)) {
    const where = `args.${name}`;
    if (!ARGUMENT_NAME_PATTERN.test(name)) {
      problems.push(
        `${where}: an argument name starts with a letter or "_" (letters, digits, _ -)`,
      );
      continue;
    }
    if (isMetaParameter(name)) {
      problems.push(`${where}: "${name}" is a meta-parameter every command tool already takes`);
      continue;
    }
    const argument = parseArgument(value, where, problems);
    if (argument === undefined) continue;
    if (argument.flag !== undefined) {
      if (flags.has(argument.flag)) problems.push(`${where}: flag ${argument.flag} is used twice`);
      flags.add(argument.flag);
    }
    args[name] = argument;
  }
  return Object.keys(args).length === 0 ? undefined : args;
}

function parseArgument(
  raw: unknown,
  where: string,
  problems: string[],
): RegisteredArgument | undefined {
  if (!isObject(raw)) {
    problems.push(`${where} is an object with type, description and required`);
    return undefined;
  }
  const before = problems.length;
  for (const key of Object.keys(raw)) {
    if (!ARGUMENT_FIELDS.includes(key)) {
      problems.push(`${where}: unknown field "${key}" (fields: ${ARGUMENT_FIELDS.join(', ')})`);
    }
  }
  const type = raw['type'];
  if (!ARGUMENT_TYPES.includes(type as ArgumentType)) {
    problems.push(
      `${where}.type ${JSON.stringify(type)} is not one of ${ARGUMENT_TYPES.join(', ')}`,
    );
  }
  const description = optionalString(raw, 'description', problems, where);
  const required = raw['required'];
  if (required !== undefined && typeof required !== 'boolean') {
    problems.push(`${where}.required is true or false`);
  }
  const flag = optionalString(raw, 'flag', problems, where);
  if (flag !== undefined && !FLAG_PATTERN.test(flag)) {
    problems.push(`${where}.flag "${flag}" is not a flag like "--name" or "-n"`);
  }
  const format = optionalString(raw, 'format', problems, where);
  if (format !== undefined && (format !== 'path' || type !== 'string')) {
    problems.push(`${where}.format: only a string argument has a format, and it is "path"`);
  }
  if (problems.length > before) return undefined;
  return {
    type: type as ArgumentType,
    ...(description === undefined ? {} : { description }),
    ...(required === true ? { required } : {}),
    ...(flag === undefined ? {} : { flag }),
    ...(format === undefined ? {} : { format: 'path' as const }),
  };
}

/** A string field; "" counts as unset. */
function optionalString(
  raw: Record<string, unknown>,
  key: string,
  problems: string[],
  where?: string,
): string | undefined {
  const value = raw[key];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string') return value;
  problems.push(`${where === undefined ? key : `${where}.${key}`} is a string`);
  return undefined;
}

function invalid(name: string | undefined, problems: readonly string[]): AhmaError {
  const what = name === undefined ? 'the command' : `command "${name}"`;
  return new AhmaError('COMMAND_INVALID', `${what} is invalid:\n- ${problems.join('\n- ')}`);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
