// Compatibility (SPEC §2): turns the shapes the Rust ahma's tool files use into Ahma's one internal
// model, before the semantic checks, flattening and everything after them read a definition. Only
// values inside objects change, never array positions, so the JSON pointers of later diagnostics
// still point into the file as written.
import { diagnostic, jsonPointer, warning, type Diagnostic } from './diagnostic.js';
import {
  TOOL_DEFINITION_KEYS,
  type ArgumentDefinition,
  type SubcommandDefinition,
  type ToolDefinition,
} from './schema.js';
import { closestMatch } from './suggest.js';

export interface Normalized {
  /** A normalised copy; the input is not modified. */
  readonly definition: ToolDefinition;
  /** Warnings for accepted-but-redundant or ignored keys; errors for contradictions. */
  readonly diagnostics: Diagnostic[];
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The tool types Ahma runs; any other (an upstream extension's) is loaded but not offered. */
const RUNNABLE_TOOL_TYPES: ReadonlySet<string> = new Set(['command', 'livelog']);

/** The only `format` that means anything (upstream's too); others are dropped with a warning. */
const PATH_FORMAT = 'path';

export function normalizeDefinition(file: string, input: ToolDefinition): Normalized {
  const definition = structuredClone(input) as Mutable<ToolDefinition>;
  const diagnostics: Diagnostic[] = [];
  dropUnknownTopLevelKeys(file, definition as Record<string, unknown>, diagnostics);
  dropInputSchema(file, definition, diagnostics);
  disableUnknownToolType(file, definition, diagnostics);
  foldForceSynchronous(file, definition, '', diagnostics);
  const walk = (subs: SubcommandDefinition[] | undefined, path: (string | number)[]) => {
    subs?.forEach((sub: Mutable<SubcommandDefinition>, index) => {
      const here = [...path, 'subcommand', index];
      foldForceSynchronous(file, sub, jsonPointer(here), diagnostics);
      if (sub.asynchronous !== undefined) {
        // Upstream never read it (its subcommands keep unknown keys): ignored there, so here too.
        diagnostics.push(
          warning(
            file,
            `${jsonPointer(here)}/asynchronous`,
            '"asynchronous" is ignored, as the Rust ahma ignores it',
            'a subcommand runs asynchronously unless it says "synchronous": true; remove the key',
          ),
        );
        delete sub.asynchronous;
      }
      for (const list of ['options', 'positional_args'] as const) {
        sub[list]?.forEach((argument, at) =>
          normalizeArgument(file, argument, jsonPointer([...here, list, at]), diagnostics),
        );
      }
      walk(sub.subcommand, here);
    });
  };
  walk(definition.subcommand, []);
  return { definition, diagnostics };
}

/**
 * The Rust ahma keeps any key at a tool's top level (its schema says `additionalProperties: true`
 * there), so such a key is ignored with a warning rather than refusing the file; a close match is
 * named, since it is most likely a typo. The key named after an extension's `tool_type` is that
 * extension's configuration block: the tool_type warning covers it.
 */
export function unknownTopLevelKeyWarnings(file: string, document: unknown): Diagnostic[] {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return [];
  const record = document as Record<string, unknown>;
  const extensionBlock = unknownToolType(record['tool_type']);
  return unknownTopLevelKeys(record)
    .filter((key) => key !== extensionBlock)
    .map((key) => {
      const suggestion = closestMatch(key, TOOL_DEFINITION_KEYS);
      return warning(
        file,
        jsonPointer([key]),
        `unknown key "${key}" is ignored`,
        suggestion === undefined
          ? 'Ahma does not use it; the Rust ahma accepts any key at the top level of a tool'
          : `did you mean "${suggestion}"?`,
      );
    });
}

function unknownTopLevelKeys(definition: Record<string, unknown>): string[] {
  return Object.keys(definition).filter((key) => !TOOL_DEFINITION_KEYS.includes(key));
}

function dropUnknownTopLevelKeys(
  file: string,
  definition: Record<string, unknown>,
  diagnostics: Diagnostic[],
): void {
  diagnostics.push(...unknownTopLevelKeyWarnings(file, definition));
  for (const key of unknownTopLevelKeys(definition)) Reflect.deleteProperty(definition, key);
}

function unknownToolType(toolType: unknown): string | undefined {
  return typeof toolType === 'string' && !RUNNABLE_TOOL_TYPES.has(toolType) ? toolType : undefined;
}

/** Upstream still accepts (and ignores) its old generated `input_schema`. */
function dropInputSchema(
  file: string,
  definition: Mutable<ToolDefinition>,
  diagnostics: Diagnostic[],
): void {
  if (!('input_schema' in definition)) return;
  delete definition.input_schema;
  diagnostics.push(
    warning(
      file,
      '/input_schema',
      '"input_schema" is ignored',
      "Ahma generates each tool's inputSchema from its options and positional_args; remove it",
    ),
  );
}

/**
 * A tool_type Ahma does not run (upstream routes it to an extension, like ahma-labs' "decompose")
 * loads as a disabled file: its tools are not offered, a sequence step calling them is refused,
 * and its own sequences are checked as a disabled file's are (warnings only).
 */
function disableUnknownToolType(
  file: string,
  definition: Mutable<ToolDefinition>,
  diagnostics: Diagnostic[],
): void {
  const toolType = unknownToolType(definition.tool_type);
  if (toolType === undefined) return;
  definition.enabled = false;
  diagnostics.push(
    warning(
      file,
      '/tool_type',
      `tool_type "${toolType}" is not a kind of tool Ahma runs: its tools are not offered`,
      'Ahma runs "command" and "livelog" tools; the Rust ahma hands other kinds to an extension',
    ),
  );
}

/** `force_synchronous` is the Rust ahma's alias of `synchronous`. */
function foldForceSynchronous(
  file: string,
  target: { synchronous?: boolean | undefined; force_synchronous?: boolean | undefined },
  pointer: string,
  diagnostics: Diagnostic[],
): void {
  const alias = target.force_synchronous;
  if (alias === undefined) return;
  if (target.synchronous === undefined) {
    target.synchronous = alias;
  } else if (target.synchronous === alias) {
    diagnostics.push(
      warning(
        file,
        `${pointer}/force_synchronous`,
        'force_synchronous repeats "synchronous"',
        'remove one of the two',
      ),
    );
  } else {
    diagnostics.push(
      diagnostic(
        file,
        `${pointer}/force_synchronous`,
        `force_synchronous (${String(alias)}) contradicts "synchronous" (${String(target.synchronous)})`,
        'they are the same setting; keep one',
      ),
    );
  }
  delete target.force_synchronous;
}

/**
 * A `format` other than "path" (upstream's is free-form: `"path-or-value"`) is dropped with a
 * warning: the value is passed as given. `array` without `items` has string elements; `format:
 * "path"` on an array of strings applies to each element, so it moves to `items` (an array value
 * is not a string: JSON Schema's format would not apply to it, and ajv's strict mode refuses the
 * schema).
 */
function normalizeArgument(
  file: string,
  argument: Mutable<ArgumentDefinition>,
  pointer: string,
  diagnostics: Diagnostic[],
): void {
  const dropFormat = (owner: { format?: string | undefined }, at: string) => {
    if (owner.format === undefined || owner.format === PATH_FORMAT) return;
    diagnostics.push(
      warning(
        file,
        `${at}/format`,
        `format "${owner.format}" has no effect`,
        'only "path" has an effect; this value is passed to the program as given',
      ),
    );
    delete owner.format;
  };
  dropFormat(argument, pointer);
  if (argument.items !== undefined) dropFormat(argument.items, `${pointer}/items`);
  if (argument.type !== 'array') return;
  argument.items ??= { type: 'string' };
  if (argument.format === PATH_FORMAT && argument.items.type === 'string') {
    argument.items = { ...argument.items, format: PATH_FORMAT };
    delete argument.format;
  }
}
