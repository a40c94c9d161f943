// The registry file: instant-mcp's state-file format, `{"version": "1.0", "commands": {name:
// command}}`, so an instant-mcp state.json loads unmodified and instant-mcp could read ours (it
// ignores the fields it does not know: an argument's flag and format). Commands keep their order.
import { lstat, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { isObject, parseCommand, type RegisteredCommand } from './command.js';
import type { PinnedDirectory } from './pinned-directory.js';
import { NotRegularFileError, readRegularFile } from '../paths/read-regular.js';

export const REGISTRY_FILE_VERSION = '1.0';
/** A registry of many thousands of commands stays far below this. */
const MAX_REGISTRY_BYTES = 64 * 1024 * 1024;

/** A registry entry: a valid command, or one kept as written but not served (and why). */
export type RegistryEntry =
  | { readonly kind: 'command'; readonly command: RegisteredCommand }
  | {
      readonly kind: 'rejected';
      readonly name: string;
      readonly raw: unknown;
      readonly problem: string;
    };

export type RegistryFileRead =
  | {
      readonly kind: 'loaded';
      readonly entries: ReadonlyMap<string, RegistryEntry>;
      /** The file's text as read (undefined: no file). */
      readonly text: string | undefined;
    }
  /** The text is `known` (what the caller last read or wrote): nothing was parsed. */
  | { readonly kind: 'unchanged' }
  /** Unreadable as a registry: moved aside to `backup` (EC4); the registry starts empty. */
  | { readonly kind: 'corrupt'; readonly problem: string; readonly backup: string };

/**
 * Reads the registry file `name` in `dir`; a missing file is an empty registry. With `known`, a
 * file whose text is that (undefined: no file) is 'unchanged', not parsed again.
 */
export async function readRegistryFile(
  dir: PinnedDirectory,
  name: string,
  options: { readonly now?: Date; readonly known?: string | undefined } = {},
): Promise<RegistryFileRead> {
  const compare = Object.hasOwn(options, 'known');
  let parsed: Map<string, RegistryEntry> | string;
  let text = '';
  try {
    text = await readRegularFile(dir.entry(name), MAX_REGISTRY_BYTES);
    if (compare && text === options.known) return { kind: 'unchanged' };
    parsed = parseRegistryText(text);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      if (compare && options.known === undefined) return { kind: 'unchanged' };
      return { kind: 'loaded', entries: new Map(), text: undefined };
    }
    // Not readable as a file at all (a FIFO, a symlink loop, no permission): no registry either.
    parsed =
      error instanceof NotRegularFileError
        ? error.message
        : `unreadable: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
  }
  if (typeof parsed === 'string') {
    const backup = await freeName(
      dir,
      `${name}.corrupt-${(options.now ?? new Date()).toISOString().replaceAll(':', '-')}`,
    );
    await rename(dir.entry(name), dir.entry(backup));
    return { kind: 'corrupt', problem: parsed, backup: join(dir.path, backup) };
  }
  return { kind: 'loaded', entries: parsed, text };
}

/** `name`, or `name-2`, `name-3`, … : the first that nothing in `dir` has (an earlier backup). */
async function freeName(dir: PinnedDirectory, name: string): Promise<string> {
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? name : `${name}-${String(n)}`;
    if ((await lstat(dir.entry(candidate)).catch(() => undefined)) === undefined) return candidate;
  }
}

/** The entries of a registry file's text, or why it is not one. */
export function parseRegistryText(text: string): Map<string, RegistryEntry> | string {
  let document: unknown;
  try {
    document = JSON.parse(text) as unknown;
  } catch (error) {
    return `not JSON: ${(error as Error).message}`;
  }
  if (!isObject(document)) return 'not a JSON object';
  const version = document['version'];
  if (version !== undefined && version !== REGISTRY_FILE_VERSION) {
    return `version ${JSON.stringify(version)} is not ${REGISTRY_FILE_VERSION}`;
  }
  const commands = document['commands'] ?? {};
  if (!isObject(commands)) return '"commands" is not an object';
  return commandEntries(commands);
}

/**
 * The entries of a `commands` map (registry file, or an import): a command's name is its key when
 * it names none. An entry that is not a valid command is kept, rejected, with the reason.
 */
export function commandEntries(commands: Record<string, unknown>): Map<string, RegistryEntry> {
  const entries = new Map<string, RegistryEntry>();
  for (const [key, raw] of Object.entries(commands)) {
    const named = isObject(raw) && raw['name'] === undefined ? { name: key, ...raw } : raw;
    try {
      const command = parseCommand(named);
      if (command.name !== key)
        throw new Error(`its key "${key}" differs from its name "${command.name}"`);
      entries.set(key, { kind: 'command', command });
    } catch (error) {
      entries.set(key, { kind: 'rejected', name: key, raw, problem: (error as Error).message });
    }
  }
  return entries;
}

/** The file's text: rejected entries are written back as they were, so nothing is lost. */
export function renderRegistryFile(entries: ReadonlyMap<string, RegistryEntry>): string {
  const commands = Object.fromEntries(
    [...entries].map(([name, entry]) => [
      name,
      entry.kind === 'command' ? entry.command : entry.raw,
    ]),
  );
  return `${JSON.stringify({ version: REGISTRY_FILE_VERSION, commands }, null, 2)}\n`;
}
