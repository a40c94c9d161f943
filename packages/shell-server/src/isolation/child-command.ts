// The command line of an isolated session's process (R8D.3): this package's own `ahma-shell
// --mode stdio`, run by the Node that runs the server (with `--expose-gc`, for a spare's wait),
// with the server's flags that shape what a session serves and how — those runtime/flags.ts marks
// for a session's process, written back from the server's options in the table's order. The
// session appends `--sandbox-scope <its scope>`; the HTTP flags and --session-isolation stay with
// the server. Relative paths are made absolute against the server's directory: the process starts
// in its scope.
import { resolve } from 'node:path';
import { type AnyFlag, flagEntries, isDefaultValue } from '../runtime/flags.js';
import type { ServerOptions } from '../runtime/settings.js';
import { ahmaShellBin } from '../package.js';
import type { ChildCommand } from './child.js';

export function isolatedChildCommand(
  options: ServerOptions,
  cwd: string,
  bin: string = ahmaShellBin(),
  node: string = process.execPath,
): ChildCommand {
  // --expose-gc: a spare collects the garbage of its start while it waits (cli/main.ts).
  const args = ['--expose-gc', bin, '--mode', 'stdio'];
  for (const [field, flag] of flagEntries()) args.push(...childWords(flag, options[field], cwd));
  return { file: node, args, unsetEnv: inheritedFlagVariables() };
}

/**
 * The flags' variables a session's process must not inherit: the server read them already, and its
 * options reach the process on the command line alone. Inherited, a variable would stand in for a
 * flag the server was given with its default value (`--allow-write ''` over AHMA_ALLOW_WRITE=/)
 * and give the session what the server was told not to. Core's own two (AHMA_TOOLS_DIR,
 * AHMA_SANDBOX_SCOPE) stay: the session sets its scope, and a relative tools dir is its scope's.
 */
function inheritedFlagVariables(): string[] {
  return flagEntries()
    .filter(([, flag]) => flag.envReadBy !== 'core')
    .map(([, flag]) => flag.env);
}

/** The words that give a session's process the server's value of `flag`, if any. */
function childWords(flag: AnyFlag, value: unknown, cwd: string): string[] {
  if (flag.toChild === 'no') return [];
  if (flag.toChild === 'unless-default' && isDefaultValue(flag, value)) return [];
  const name = `--${flag.name}`;
  if (value === true) return [name];
  // The child reads a list back the way the server read it: split at commas.
  if (Array.isArray(value)) return [name, value.join(',')];
  if (typeof value === 'number') return [name, String(value)];
  if (typeof value !== 'string') return [];
  return [name, flag.path === true ? resolve(cwd, value) : value];
}
