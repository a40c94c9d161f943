// Compatibility (SPEC §2): turns the shapes the Rust ahma's tool files use into Ahma's one internal
// model, before the semantic checks, flattening and everything after them read a definition. Only
// values inside objects change, never array positions, so the JSON pointers of later diagnostics
// still point into the file as written.
import { diagnostic, jsonPointer, warning, type Diagnostic } from './diagnostic.js';
import type { ArgumentDefinition, SubcommandDefinition, ToolDefinition } from './schema.js';

export interface Normalized {
  /** A normalised copy; the input is not modified. */
  readonly definition: ToolDefinition;
  /** Warnings for accepted-but-redundant keys; errors for contradictions. */
  readonly diagnostics: Diagnostic[];
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export function normalizeDefinition(file: string, input: ToolDefinition): Normalized {
  const definition = structuredClone(input) as Mutable<ToolDefinition>;
  const diagnostics: Diagnostic[] = [];
  foldForceSynchronous(file, definition, '', diagnostics);
  const walk = (subs: SubcommandDefinition[] | undefined, path: (string | number)[]) => {
    subs?.forEach((sub: Mutable<SubcommandDefinition>, index) => {
      const here = [...path, 'subcommand', index];
      const pointer = jsonPointer(here);
      foldForceSynchronous(file, sub, pointer, diagnostics);
      if (sub.concurrency !== undefined) {
        diagnostics.push(
          warning(
            file,
            `${pointer}/concurrency`,
            `"concurrency" has no effect in Ahma`,
            'every operation runs in its own supervised process tree; remove it unless the file is shared with the Rust ahma',
          ),
        );
        delete sub.concurrency;
      }
      sub.options?.forEach(normalizeArgument);
      sub.positional_args?.forEach(normalizeArgument);
      walk(sub.subcommand, here);
    });
  };
  walk(definition.subcommand, []);
  return { definition, diagnostics };
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
 * `array` without `items` has string elements; `format: "path"` on an array of strings applies to
 * each element, so it moves to `items` (an array value is not a string: JSON Schema's format would
 * not apply to it, and ajv's strict mode refuses the schema).
 */
function normalizeArgument(argument: Mutable<ArgumentDefinition>): void {
  if (argument.type !== 'array') return;
  argument.items ??= { type: 'string' };
  if (argument.format === 'path' && argument.items.type === 'string') {
    argument.items = { ...argument.items, format: 'path' };
    delete argument.format;
  }
}
