// The command registry's nine management tools (SPEC §8, FR4.1–FR4.9): one record each, in the
// order they are listed, thin over core's Registry. A change is on disk before the call answers,
// and the tool list changes with it (the runtime re-lists and every connection gets
// tools/list_changed).
import {
  BATCH_OPERATIONS,
  DEFAULT_EXPORT_PATH,
  REGISTRY_TOOLS,
  exportConfig,
  importConfig,
  runBatch,
  type RegisteredCommand,
  type Registry,
  type RegistryEntry,
} from '@ahma/core';
import { isRefusal, refused, refusing, type ToolEntry } from '../tool.js';
import { fallbackDescription } from '../registered.js';
import { COMMAND_FIELDS, NAME } from './command-fields.js';
import { registryGuide } from './help.js';
import {
  answer,
  change,
  objectSchema,
  registryEntry,
  type RegistryTool,
  type RegistryToolsContext,
} from './registry-tool.js';

export type { RegistryToolsContext };

const addCommand: RegistryTool = {
  name: REGISTRY_TOOLS.add,
  result: { command: 'object' },
  description:
    'Register an executable as a new MCP tool, at once and persistently. Example: {"name": "greet", "exec": "./scripts/greet.sh", "description": "Greet someone", "args": {"who": {"type": "string", "required": true}}} — then call the tool greet {"who": "world"}.',
  inputSchema: {
    type: 'object',
    properties: {
      name: {
        type: 'string',
        maxLength: 128,
        pattern: '^[A-Za-z0-9_]+$',
        description: 'The tool name: letters, digits, _',
      },
      ...COMMAND_FIELDS,
    },
    // description optional, as in instant-mcp: its own README registers commands without one.
    required: ['name', 'exec'],
    additionalProperties: false,
  },
  async call(args, context) {
    const added = await change(context, (draft) => draft.add(args));
    if (isRefusal(added)) return added;
    return answer(
      `Registered "${added.name}": it is now the tool ${added.name}${usage(added)}.${noDescription(added)}`,
      { command: added },
    );
  },
};

const removeCommand: RegistryTool = {
  name: REGISTRY_TOOLS.remove,
  result: { removed: 'string' },
  description: 'Unregister a command; its tool goes at once. Example: {"name": "greet"}',
  inputSchema: objectSchema({ name: NAME }, ['name']),
  async call(args, context) {
    const removed = await change(context, (draft) => Promise.resolve(draft.remove(args)));
    if (isRefusal(removed)) return removed;
    return answer(`Removed "${String(args['name'])}".`, { removed: String(args['name']) });
  },
};

const updateCommand: RegistryTool = {
  name: REGISTRY_TOOLS.update,
  result: { command: 'object' },
  description:
    'Change a registered command: the fields given replace its own ("args" as a whole; null unsets a field). Example: {"name": "greet", "timeout": "5m", "async": true}',
  inputSchema: {
    type: 'object',
    properties: { name: NAME, ...COMMAND_FIELDS },
    required: ['name'],
    additionalProperties: false,
  },
  async call(args, context) {
    const updated = await change(context, (draft) => draft.update(args));
    if (isRefusal(updated)) return updated;
    return answer(`Updated "${updated.name}"${usage(updated)}.`, { command: updated });
  },
};

const listCommands: RegistryTool = {
  name: REGISTRY_TOOLS.list,
  result: { file: 'string', commands: 'array', rejected: 'array', notices: 'array' },
  description:
    'List the registered commands (name, executable, arguments, mode), any entry that is invalid, and any problem with the registry file. Example: {}',
  inputSchema: objectSchema({}, []),
  call(_args, context) {
    const listed = listing(context);
    const lines = listed.commands.map(
      (c) =>
        `- ${c.name}${c.shadowedBy === undefined ? '' : ` (not served: ${c.shadowedBy})`}: ${c.description ?? c.exec}`,
    );
    const rejected = listed.rejected.map((r) => `- ${r.name} (invalid, not served): ${r.problem}`);
    const text = [
      listed.commands.length === 0 && rejected.length === 0
        ? 'No commands registered. Register one with add_command (help shows how).'
        : `${String(listed.commands.length)} registered command(s):`,
      ...lines,
      ...rejected,
      ...noticeLines(context.registry),
    ].join('\n');
    return answer(text, listed);
  },
};

const getCommand: RegistryTool = {
  name: REGISTRY_TOOLS.get,
  result: { command: 'object' },
  description: 'Show one registered command in full, as stored. Example: {"name": "greet"}',
  inputSchema: objectSchema({ name: NAME }, ['name']),
  call(args, context) {
    const name = String(args['name']);
    const found = context.registry.get(name);
    if (found === undefined) {
      return refused(
        `no registered command "${name}" (list_commands lists them)`,
        'COMMAND_UNKNOWN',
      );
    }
    const shown = describeEntry(found, context);
    return answer(JSON.stringify(shown, null, 2), { command: shown });
  },
};

const batchExec: RegistryTool = {
  name: REGISTRY_TOOLS.batch,
  result: { success: 'boolean', atomic: 'boolean', rolledBack: 'boolean', results: 'array' },
  description:
    'Several add_command, update_command and remove_command operations in one call, written once. atomic (default true): all or nothing. Example: {"commands": [{"operation": "add_command", "params": {"name": "lint", "exec": "./scripts/lint.sh", "description": "Lint"}}, {"operation": "remove_command", "params": {"name": "old"}}], "atomic": true}',
  inputSchema: objectSchema(
    {
      commands: {
        type: 'array',
        minItems: 1,
        maxItems: 1000,
        items: {
          type: 'object',
          properties: {
            operation: { type: 'string', enum: [...BATCH_OPERATIONS] },
            params: { type: 'object', description: 'The arguments that tool takes' },
          },
          required: ['operation', 'params'],
          additionalProperties: false,
        },
      },
      atomic: { type: 'boolean', description: 'All or nothing (default true)' },
    },
    ['commands'],
  ),
  async call(args, context) {
    const atomic = args['atomic'] !== false;
    const commands = args['commands'] as unknown[];
    const outcome = await change(context, (draft) => runBatch(draft, commands, atomic));
    if (isRefusal(outcome)) return outcome;
    const done = outcome.results.filter((r) => r.success).length;
    const failed = outcome.results.find((r) => !r.success);
    const summary = outcome.rolledBack
      ? `Nothing changed: operation ${String(failed?.index)} (${String(failed?.operation)}) failed, so the atomic batch was rolled back. ${failed?.error?.message ?? ''}`
      : `${String(done)}/${String(commands.length)} operations succeeded${outcome.success ? '' : '; the others failed (see results)'}.`;
    return answer(
      `${summary}\n${JSON.stringify(outcome.results, null, 2)}`,
      outcome,
      !outcome.success,
    );
  },
};

const importConfigTool: RegistryTool = {
  name: REGISTRY_TOOLS.import,
  result: {
    counts: 'object',
    path: 'string',
    imported: 'array',
    skipped: 'array',
    errors: 'array',
  },
  description:
    'Register the commands of a YAML or JSON file (export_config\'s, or instant-mcp\'s export or state.json). Names already registered are skipped unless overwrite. Example: {"path": ".ahma/commands.yaml", "overwrite": false}',
  inputSchema: objectSchema(
    {
      path: {
        type: 'string',
        description: 'The file; relative paths start at the sandbox scope',
      },
      overwrite: {
        type: 'boolean',
        description: 'Replace commands of the same name (default false)',
      },
    },
    ['path'],
  ),
  async call(args, context) {
    const report = await change(context, (draft) =>
      importConfig(draft, {
        path: String(args['path']),
        overwrite: args['overwrite'] === true,
        scope: context.scope,
      }),
    );
    if (isRefusal(report)) return report;
    const counts = {
      imported: report.imported.length,
      skipped: report.skipped.length,
      errors: report.errors.length,
    };
    const text = [
      `Imported ${String(counts.imported)}, skipped ${String(counts.skipped)} (already registered), ${String(counts.errors)} error(s) from ${report.path}.`,
      ...report.errors.map((e) => `- ${e.name}: [${e.code}] ${e.message}`),
    ].join('\n');
    // An error only when some entries failed and none was imported: a skipped name is no failure.
    return answer(text, { counts, ...report }, counts.errors > 0 && counts.imported === 0);
  },
};

const exportConfigTool: RegistryTool = {
  name: REGISTRY_TOOLS.export,
  result: { path: 'string', exported: 'array' },
  description: `Write the registered commands to a YAML file (for version control; import_config reads it back). Example: {"path": "${DEFAULT_EXPORT_PATH}"}`,
  inputSchema: objectSchema(
    {
      path: {
        type: 'string',
        description: `Inside the sandbox scope; relative to it (default ${DEFAULT_EXPORT_PATH})`,
      },
    },
    [],
  ),
  async call(args, context) {
    const { registry } = context;
    const commands = registry.commands;
    const path = await refusing(() =>
      exportConfig(commands, {
        path: typeof args['path'] === 'string' ? args['path'] : undefined,
        scope: context.scope,
        registryFile: registry.file,
      }),
    );
    if (isRefusal(path)) return path;
    return answer(`Exported ${String(commands.length)} command(s) to ${path}.`, {
      path,
      exported: commands.map((c) => c.name),
    });
  },
};

const help: RegistryTool = {
  name: REGISTRY_TOOLS.help,
  result: { guide: 'string' },
  description: 'The guide to registering your own commands as tools, with examples. Example: {}',
  inputSchema: objectSchema({}, []),
  call(_args, { registry }) {
    const text = [
      registryGuide({ file: registry.file, count: registry.commands.length }),
      ...noticeLines(registry),
    ].join('\n');
    return answer(text, { guide: text });
  },
};

/** The nine, in the order tools/list shows them (after the built-ins, FR4.9). */
const MANAGEMENT_TOOLS: readonly RegistryTool[] = [
  addCommand,
  removeCommand,
  updateCommand,
  listCommands,
  getCommand,
  batchExec,
  importConfigTool,
  exportConfigTool,
  help,
];

export function registryTools(context: RegistryToolsContext): ToolEntry[] {
  return MANAGEMENT_TOOLS.map((spec) => registryEntry(context, spec));
}

/** A nudge when the command says nothing about itself: agents pick tools by their description. */
function noDescription(command: RegisteredCommand): string {
  if (command.description !== undefined) return '';
  return ` It has no description, so its tool says "${fallbackDescription(command)}"; update_command {"name": "${command.name}", "description": "…"} gives it one.`;
}

/** How to call a command's tool: ` {"a": …, "b": …}`, or nothing when it takes no arguments. */
function usage(command: RegisteredCommand): string {
  const names = Object.keys(command.args ?? {});
  return names.length === 0 ? ' {}' : ` {${names.map((n) => `"${n}": …`).join(', ')}}`;
}

function listing(context: RegistryToolsContext) {
  const commands = context.registry.commands.map((command) => ({
    ...command,
    ...shadowed(context, command.name),
  }));
  const rejected = context.registry.entries.flatMap((e) =>
    e.kind === 'rejected' ? [{ name: e.name, problem: e.problem }] : [],
  );
  return { file: context.registry.file, commands, rejected, notices: context.registry.notices };
}

/** A stored entry as get_command shows it: a valid command as stored, an invalid one with why. */
function describeEntry(entry: RegistryEntry, context: RegistryToolsContext): object {
  if (entry.kind === 'rejected') {
    return { name: entry.name, invalid: entry.problem, stored: entry.raw };
  }
  return { ...entry.command, ...shadowed(context, entry.command.name) };
}

function shadowed(context: RegistryToolsContext, name: string): { shadowedBy?: string } {
  const by = context.shadowedBy(name);
  return by === undefined ? {} : { shadowedBy: by };
}

function noticeLines(registry: Registry): string[] {
  return registry.notices.map(
    (n) =>
      `Note: the registry file could not be read (${n.problem}); it was moved to ${n.backup} and the registry started empty. Repair it and import_config it, or keep the backup for reference.`,
  );
}
