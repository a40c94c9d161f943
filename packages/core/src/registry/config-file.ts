// import_config and export_config (FR4.7, FR4.8, EC7): commands to and from a YAML file (or JSON,
// which YAML reads too). Both of instant-mcp's files import as they are: its export (`commands:`
// map in YAML) and its state file (the same map in JSON, with a version). Export → import gives
// back every field.
import { realpath } from 'node:fs/promises';
import type * as Yaml from 'yaml';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { realpathLenient, resolvePathInScope } from '../argv/paths.js';
import { isInside } from '../paths/inside.js';
import { AhmaError } from '../errors.js';
import { isObject, type RegisteredCommand } from './command.js';
import type { RegistryDraft } from './draft.js';
import { commandEntries } from './registry-file.js';
import { withPinnedDirectory } from './pinned-directory.js';
import { readRegularFile } from '../paths/read-regular.js';
import { writeFileAtomic } from './write-atomic.js';

/** Where export_config writes by default, relative to the sandbox scope. */
export const DEFAULT_EXPORT_PATH = '.ahma/commands.yaml';
/** A commands file larger than this is not one. */
const MAX_CONFIG_BYTES = 8 * 1024 * 1024;

export interface ImportReport {
  readonly path: string;
  readonly imported: readonly string[];
  /** Already registered, and overwrite was not asked for. */
  readonly skipped: readonly string[];
  readonly errors: readonly {
    readonly name: string;
    readonly code: string;
    readonly message: string;
  }[];
}

/**
 * Adds the file's commands to the draft: an existing name is skipped unless `overwrite`, and an
 * entry that fails its checks is reported without stopping the others. Reading is not confined to
 * the scope (commands may read anywhere too); a relative path is relative to the scope.
 */
export async function importConfig(
  draft: RegistryDraft,
  options: { readonly path: string; readonly overwrite: boolean; readonly scope: string },
): Promise<ImportReport> {
  const path = isAbsolute(options.path) ? options.path : resolve(options.scope, options.path);
  const commands = await parseConfig(await readConfig(path), options.path);
  const report = {
    path,
    imported: [] as string[],
    skipped: [] as string[],
    errors: [] as ImportReport['errors'][number][],
  };
  for (const [name, entry] of commandEntries(commands)) {
    if (entry.kind === 'rejected') {
      report.errors.push({ name, code: 'COMMAND_INVALID', message: entry.problem });
    } else if (draft.entries.has(name) && !options.overwrite) {
      report.skipped.push(name);
    } else {
      try {
        await draft.put(entry.command);
        report.imported.push(name);
      } catch (error) {
        if (!(error instanceof AhmaError)) throw error;
        report.errors.push({ name, code: error.code, message: error.message });
      }
    }
  }
  return report;
}

/**
 * Writes the commands as YAML, inside the scope only (through the pinned directory, so a symlink
 * planted meanwhile cannot redirect it), never over the registry file; returns the path written.
 */
export async function exportConfig(
  commands: readonly RegisteredCommand[],
  options: {
    readonly path: string | undefined;
    readonly scope: string;
    readonly registryFile: string;
  },
): Promise<string> {
  const path = await resolvePathInScope(
    options.path ?? DEFAULT_EXPORT_PATH,
    options.scope,
    options.scope,
    'path',
  );
  // Resolved again, on its own: what it resolves to now is what is pinned, and must be inside too.
  const dir = await realpathLenient(dirname(path));
  if (!isInside(dir, await realpath(options.scope))) {
    throw new AhmaError(
      'PATH_OUTSIDE_SCOPE',
      `argument "path": ${path} now lies outside the sandbox scope (its directory resolves to ${dir})`,
    );
  }
  const target = join(dir, basename(path));
  if (
    target ===
    join(await realpathLenient(dirname(options.registryFile)), basename(options.registryFile))
  ) {
    throw new AhmaError('CONFIG_INVALID', `${path} is the registry file itself; export elsewhere`);
  }
  const { stringify } = await loadYaml();
  const body = stringify({
    commands: Object.fromEntries(commands.map((command) => [command.name, command])),
  });
  // The path as a JSON string: a newline in it would otherwise end the comment (and the rest of
  // the path would be read as YAML), and a quote would break the call it shows.
  const header = `# Ahma registered commands, written by export_config.\n# Load them with import_config {"path": ${JSON.stringify(options.path ?? DEFAULT_EXPORT_PATH)}}.\n`;
  try {
    await withPinnedDirectory(dir, (pinned) =>
      writeFileAtomic(pinned, basename(path), header + body),
    );
  } catch (error) {
    throw new AhmaError('CONFIG_INVALID', `cannot write ${path}: ${(error as Error).message}`);
  }
  return path;
}

async function readConfig(path: string): Promise<string> {
  try {
    return await readRegularFile(path, MAX_CONFIG_BYTES);
  } catch (error) {
    throw new AhmaError('CONFIG_INVALID', `cannot read ${path}: ${(error as Error).message}`);
  }
}

/**
 * The YAML library, loaded when a file is first imported or exported: a server that never does
 * (nearly all) does not load its 270 kB at every start.
 */
async function loadYaml(): Promise<typeof Yaml> {
  const loaded = (await import('yaml')) as typeof Yaml & { default?: typeof Yaml };
  // A bundle that wraps the CommonJS build (ahma-shell's) gives its exports as `default` only.
  return loaded.default ?? loaded;
}

/** The `commands` map of a file's text. */
async function parseConfig(text: string, given: string): Promise<Record<string, unknown>> {
  const { parse, YAMLParseError } = await loadYaml();
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    // Not the parser's message: it quotes the file, which need not be the agent's to read.
    const where =
      error instanceof YAMLParseError && error.linePos !== undefined
        ? ` (line ${String(error.linePos[0].line)}, column ${String(error.linePos[0].col)}: ${error.code})`
        : '';
    throw new AhmaError('CONFIG_INVALID', `${given} is not YAML or JSON${where}`);
  }
  const commands = isObject(document) ? document['commands'] : undefined;
  if (!isObject(commands)) {
    throw new AhmaError(
      'CONFIG_INVALID',
      `${given} has no "commands" map ({"commands": {"name": {"exec": …}}}, as export_config writes)`,
    );
  }
  return commands;
}
