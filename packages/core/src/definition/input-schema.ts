// The JSON Schema of a tool's arguments (its MCP inputSchema), generated from the definition, and
// the validation of a call's arguments against it before anything runs.
import type { InteractiveRequest } from '../process/interactive.js';
import { MAX_MAX_OUTPUT_TOKENS, MIN_MAX_OUTPUT_TOKENS } from '../process/output.js';
import { LANES } from '../lanes/workspace-lanes.js';
import type { ArgumentDefinition } from './schema.js';
import { MAX_TIMEOUT_SECONDS } from './schema.js';
import type { ToolLeaf } from './flatten.js';
import { livelogInputSchema } from './livelog-settings.js';
import type { JsonSchema } from './json-schema.js';
import { createSchemaCompiler, type SchemaCheck } from './schema-check.js';

/**
 * Arguments that steer the execution and are never passed to the command (R10.1–R10.3, R15.2,
 * R15.4).
 */
export const META_PARAMETERS = [
  'working_directory',
  'timeout_seconds',
  'execution_mode',
  'max_output_tokens',
  'pty',
  'stdin',
  'concurrency',
] as const;
export type MetaParameter = (typeof META_PARAMETERS)[number];

export function isMetaParameter(name: string): name is MetaParameter {
  return (META_PARAMETERS as readonly string[]).includes(name);
}

/** The values of the execution_mode meta-parameter (R10.1). */
export const EXECUTION_MODES = ['Synchronous', 'AsyncResultPush'] as const;
export type ExecutionMode = (typeof EXECUTION_MODES)[number];

/** JSON Schema of the optional meta-parameters every command tool accepts. */
export const META_PARAMETER_PROPERTIES: Readonly<Record<string, JsonSchema>> = {
  working_directory: {
    type: 'string',
    description:
      'Directory to run in, absolute or relative to the sandbox scope; must lie inside the scope. Default: the scope.',
  },
  timeout_seconds: {
    type: 'number',
    exclusiveMinimum: 0,
    maximum: MAX_TIMEOUT_SECONDS,
    description: "Kill the command after this many seconds; overrides the tool's own timeout.",
  },
  // R10.1: how this one call runs, whatever the tool's default (--sync still makes every call block).
  execution_mode: {
    type: 'string',
    enum: [...EXECUTION_MODES],
    description:
      "Synchronous: the call blocks and returns the result. AsyncResultPush: the call returns an operation_id (or the result, if it finishes within a few seconds), and the result comes before the result of a later tool call. Default: the tool's own mode.",
  },
  // R15.2: the call's output budget, instead of the server's (--max-output-tokens).
  max_output_tokens: {
    type: 'integer',
    minimum: MIN_MAX_OUTPUT_TOKENS,
    maximum: MAX_MAX_OUTPUT_TOKENS,
    description:
      "At most this many tokens of output (estimated as bytes / 4): beyond, the start and the end are kept and a marker says what was left out and how to read it. Default: the server's (10,000 unless configured).",
  },
  // R15.4: a command the agent talks to while it runs (write_stdin).
  pty: {
    type: 'boolean',
    description:
      'Run the command in a pseudo-terminal (120x40, TERM=xterm-256color) with its input open, for programs that want a terminal: a REPL, a password or confirmation prompt. The call answers with the operation_id while it runs; talk to it with `write_stdin`; it is ended after 10 minutes without input or output.',
  },
  stdin: {
    type: 'string',
    enum: ['open'],
    description:
      "Keep the command's standard input open (a pipe, no terminal) so `write_stdin` can write to it; by default it reads /dev/null.",
  },
  // Workspace lanes: how this call waits for other writers of its workspace (lanes/call-lane.ts).
  concurrency: {
    type: 'string',
    enum: [...LANES],
    description:
      "The workspace lane of this call: exclusive (writers of one workspace take turns), read_only (runs at once, may not write the workspace), service (runs at once beside the others). Default: the tool's; a read_only tool stays read_only.",
  },
};

/** R15.4: the terminal an interactive call gets. */
export const PTY_SIZE = { cols: 120, rows: 40 } as const;

/** R15.4: how the call wants to talk to its command (`pty`, `stdin`), or undefined: not at all. */
export function callInteractive(
  args: Readonly<Record<string, unknown>>,
): InteractiveRequest | undefined {
  if (args['pty'] === true) return { pty: PTY_SIZE };
  return args['stdin'] === 'open' ? {} : undefined;
}

/** R15.2: the call's `max_output_tokens`, when it gives one (undefined: the server's budget). */
export function callMaxOutputTokens(args: Readonly<Record<string, unknown>>): number | undefined {
  const tokens = args['max_output_tokens'];
  return typeof tokens === 'number' ? tokens : undefined;
}

/**
 * A leaf's inputSchema: its options and positionals plus the optional meta-parameters. A declared
 * `working_directory` keeps the meta-parameter's schema with the declaration's description, and
 * is required when the declaration says so.
 */
export function leafInputSchema(leaf: ToolLeaf): JsonSchema {
  const parameters = [...leaf.options, ...leaf.positionals];
  const properties: Record<string, JsonSchema> = {};
  for (const parameter of parameters) properties[parameter.name] = parameterSchema(parameter);
  // A livelog tool's own arguments (livelog.parameters, `clear`).
  const livelog = leaf.livelog === undefined ? undefined : livelogInputSchema(leaf.livelog);
  Object.assign(properties, livelog?.properties, META_PARAMETER_PROPERTIES);
  // A livelog monitor runs until cancelled: it has no blocking mode to choose.
  // It runs beside everything (the service lane): it has no lane to choose either.
  if (leaf.livelog !== undefined) {
    delete properties['execution_mode'];
    delete properties['concurrency'];
  }
  // Monitors and sequences run what their file says, nothing a person types into.
  if (leaf.livelog !== undefined || leaf.sequence !== undefined) {
    delete properties['pty'];
    delete properties['stdin'];
  }
  const declared = leaf.workingDirectory;
  if (declared?.description !== undefined) {
    properties['working_directory'] = {
      ...META_PARAMETER_PROPERTIES['working_directory'],
      description: declared.description,
    };
  }
  const required = [...parameters, ...(declared === undefined ? [] : [declared])]
    .filter((p) => p.required === true)
    .map((p) => p.name)
    .concat(livelog?.required ?? []);
  return {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

function parameterSchema(parameter: ArgumentDefinition): JsonSchema {
  const schema: JsonSchema = { type: parameter.type };
  if (parameter.description !== undefined) schema['description'] = parameter.description;
  if (parameter.enum !== undefined) schema['enum'] = parameter.enum;
  if (parameter.default !== undefined) schema['default'] = parameter.default;
  // format applies to strings; on an array it means each element (normalize.ts moves it to items).
  if (parameter.format !== undefined && parameter.type === 'string') {
    schema['format'] = parameter.format;
  }
  if (parameter.type === 'array') {
    const { type, description, enum: values, format } = parameter.items ?? { type: 'string' };
    const itemFormat = format ?? parameter.format;
    schema['items'] = {
      type,
      ...(description === undefined ? {} : { description }),
      ...(values === undefined ? {} : { enum: values }),
      ...(itemFormat === undefined || type !== 'string' ? {} : { format: itemFormat }),
    };
  }
  return schema;
}

/**
 * The arguments with every declared optional one given as `null` left out: `null` unsets an
 * optional argument (it gives nothing, even where a default would apply), so it is valid whatever
 * the argument's type. A required argument given as `null` stays and fails its type check, and so
 * does an undeclared key (it stays an unknown argument: a typo must not pass silently).
 */
function withoutUnsetting(inputSchema: JsonSchema, args: unknown): unknown {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return args;
  const required = Array.isArray(inputSchema['required']) ? inputSchema['required'] : [];
  const properties = inputSchema['properties'];
  const declared = (key: string) =>
    typeof properties === 'object' && properties !== null && Object.hasOwn(properties, key);
  return Object.fromEntries(
    Object.entries(args).filter(
      ([key, value]) => value !== null || !declared(key) || required.includes(key),
    ),
  );
}

/** A failed argument check: one message per problem, each naming the field. */
export interface ArgumentError {
  readonly field: string;
  readonly message: string;
}

/**
 * Validates call arguments against tools' input schemas. One instance serves many tools; each
 * schema is compiled on its first use and cached. Loading a tool file does not compile its
 * schemas (that was most of a server's start with a few bundles): a schema ajv refuses, which
 * would be a bug in how Ahma generates it, makes each call of that tool an error result saying
 * so, and ahma-validate reports it ahead (DocumentChecker's compileInputSchemas).
 */
export class ArgumentValidator {
  /** Each schema's check, or the error its every call gets when ajv cannot compile it. */
  readonly #checks = new WeakMap<JsonSchema, SchemaCheck | ArgumentError>();

  /** Every problem with `args`, or an empty list when they are valid. */
  validate(inputSchema: JsonSchema, args: unknown): ArgumentError[] {
    let check = this.#checks.get(inputSchema);
    if (check === undefined) {
      check = compiledCheck(inputSchema);
      this.#checks.set(inputSchema, check);
    }
    if (typeof check !== 'function') return [check];
    return check('', withoutUnsetting(inputSchema, args ?? {})).map((d) => {
      const field = d.pointer.slice(1).replaceAll('~1', '/').replaceAll('~0', '~');
      const where = field === '' ? 'arguments' : `argument "${field}"`;
      const message =
        d.message.startsWith('unknown') || d.message.startsWith('missing')
          ? d.message
          : `${where} ${d.message}`;
      return { field, message: d.hint === undefined ? message : `${message} (${d.hint})` };
    });
  }
}

/**
 * Compiled checks by schema text, shared by every validator in the process: the same tool file
 * loaded again (a reload, another runtime) costs no compile. At most SHARED_CHECKS, the oldest
 * dropped first, so a registry that keeps changing does not grow it without end.
 */
const sharedChecks = new Map<string, SchemaCheck | ArgumentError>();
const SHARED_CHECKS = 512;
const compileArgumentSchema = createSchemaCompiler('argument');

function compiledCheck(inputSchema: JsonSchema): SchemaCheck | ArgumentError {
  const text = JSON.stringify(inputSchema);
  let check = sharedChecks.get(text);
  if (check === undefined) {
    try {
      check = compileArgumentSchema(inputSchema);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      check = {
        field: '',
        message: `the tool's input schema cannot be compiled (${reason}); please report this: the tool file passed every check, so Ahma generated a bad schema`,
      };
    }
    if (sharedChecks.size >= SHARED_CHECKS) {
      sharedChecks.delete(sharedChecks.keys().next().value as string);
    }
    sharedChecks.set(text, check);
  }
  return check;
}
