// Turns a validated call into what the executor needs: argv, working directory, timeout, and the
// cleanup of any temporary files. Values keep their JSON identity; only path and file_arg values
// are substituted.
import type { ToolLeaf } from '../definition/flatten.js';
import type { ArgumentDefinition } from '../definition/schema.js';
import { buildArgv } from './build.js';
import { createFileArgWriter } from './file-args.js';
import { resolvePathInScope, resolveWorkingDirectory } from './paths.js';

export interface InvocationContext {
  /** The sandbox scope (absolute). */
  readonly scope: string;
  /**
   * Where file_arg temp files go. The server passes its private directory, where no command can
   * write (a command could otherwise change another call's file between its writing and its use);
   * default the OS temp directory.
   */
  readonly tempRoot?: string;
}

export interface PreparedInvocation {
  readonly argv: string[];
  /** Real path of the working directory, inside the scope. */
  readonly cwd: string;
  /** The per-call `timeout_seconds`, else the leaf's inherited one; undefined means the server default. */
  readonly timeoutSeconds: number | undefined;
  /** Removes temporary files written for file_arg values. */
  cleanup(): Promise<void>;
}

export async function prepareInvocation(
  leaf: ToolLeaf,
  args: Readonly<Record<string, unknown>>,
  context: InvocationContext,
): Promise<PreparedInvocation> {
  const cwd = await resolveWorkingDirectory(
    stringOrUndefined(args['working_directory']),
    context.scope,
  );
  const files = createFileArgWriter(context.tempRoot);
  try {
    const prepared = await resolvePathArguments(leaf, args, cwd, context.scope);
    for (const parameter of [...leaf.options, ...leaf.positionals]) {
      const value = Object.hasOwn(prepared, parameter.name) ? prepared[parameter.name] : undefined;
      if (parameter.file_arg === true && value !== undefined && value !== null) {
        prepared[parameter.name] = await files.write(parameter.name, String(value));
      }
    }
    const timeout = args['timeout_seconds'];
    return {
      argv: buildArgv(leaf, prepared),
      cwd,
      timeoutSeconds: typeof timeout === 'number' ? timeout : leaf.timeoutSeconds,
      cleanup: () => files.cleanup(),
    };
  } catch (error) {
    await files.cleanup();
    throw error;
  }
}

/**
 * The call's arguments with every declared one's default filled in and its `format: "path"`
 * values resolved against `cwd` (their absolute paths); throws PATH_OUTSIDE_SCOPE for one that
 * lies outside the scope. Other values are as given.
 */
export async function resolvePathArguments(
  leaf: ToolLeaf,
  args: Readonly<Record<string, unknown>>,
  cwd: string,
  scope: string,
): Promise<Record<string, unknown>> {
  const resolved: Record<string, unknown> = { ...args };
  for (const parameter of [...leaf.options, ...leaf.positionals]) {
    // Own keys only: an inherited one ("toString", "constructor") is not a value the agent gave.
    const given = Object.hasOwn(args, parameter.name) ? args[parameter.name] : undefined;
    // null unsets: it gives nothing, even where a default would apply.
    const value = given === undefined ? parameter.default : given;
    if (value === undefined || value === null) continue;
    resolved[parameter.name] = !isPathParameter(parameter)
      ? value
      : Array.isArray(value)
        ? await Promise.all(
            value.map((item: unknown) =>
              resolvePathInScope(String(item), cwd, scope, parameter.name),
            ),
          )
        : await resolvePathInScope(String(value), cwd, scope, parameter.name);
  }
  return resolved;
}

/** A `format: "path"` argument, or an array of them. */
function isPathParameter(parameter: ArgumentDefinition): boolean {
  return parameter.format === 'path' || parameter.items?.format === 'path';
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
