// The command registry's nine management tools (SPEC §8, FR4.1–FR4.9): thin entries over core's
// Registry. A change is on disk before the call answers, and the tool list changes with it (the
// runtime re-lists and every connection gets tools/list_changed).
import {
  ARGUMENT_TYPES,
  BATCH_OPERATIONS,
  DEFAULT_EXPORT_PATH,
  REGISTRY_TOOLS,
  exportConfig,
  importConfig,
  runBatch,
  type ArgumentValidator,
  type RegisteredCommand,
  type Registry,
  type RegistryDraft,
  type RegistryEntry,
} from '@ahma/core';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { outputSchemaWithError } from '../../calls/results.js';
import { fallbackDescription } from '../registered.js';
import { registryGuide } from './help.js';
import {
  NEVER_A_TASK,
  invalidArguments,
  isRefusal,
  refused,
  refusing,
  type ToolEntry,
  type ToolOutcome,
} from '../tool.js';

export interface RegistryToolsContext {
  readonly registry: Registry;
  /** The sandbox scope: relative paths of import_config and export_config start there. */
  readonly scope: string;
  /** Why a registered command is not offered as a tool (its name is another tool's), if it is not. */
  readonly shadowedBy: (name: string) => string | undefined;
  readonly validator: ArgumentValidator;
  readonly logger: Logger;
}

const NAME = { type: 'string', maxLength: 1024, description: 'The registered command' } as const;
const ARGS = {
  type: 'object',
  description:
    'The arguments, in the order they are passed: {"file": {"type": "string", "required": true, "format": "path"}, "verbose": {"type": "boolean", "flag": "-v"}}. Without "flag" a value is one positional argv element.',
  additionalProperties: {
    type: 'object',
    properties: {
      type: { type: 'string', enum: [...ARGUMENT_TYPES] },
      description: { type: 'string' },
      required: { type: 'boolean' },
      flag: { type: 'string', description: 'Pass the value after this flag ("--out", "-n")' },
      format: { type: 'string', enum: ['path'], description: 'Refuse paths outside the sandbox' },
    },
    required: ['type'],
    additionalProperties: false,
  },
} as const;
const COMMAND_FIELDS = {
  exec: {
    type: 'string',
    description:
      'The executable: absolute, relative to the sandbox scope ("./scripts/x.sh"), or a name on PATH',
  },
  args: ARGS,
  description: {
    type: 'string',
    description:
      'What the command does: agents read it as the tool\'s description (optional; without it, "Runs <exec>.")',
  },
  async: {
    type: 'boolean',
    description: 'Run in the background: the call answers with an operation id (default false)',
  },
  timeout: {
    type: 'string',
    description: 'Kill it after "30s", "5m", "1h" (default: the server\'s)',
  },
} as const;

export function registryTools(context: RegistryToolsContext): ToolEntry[] {
  const { registry } = context;
  const change = <T>(work: (draft: RegistryDraft) => Promise<T>) =>
    refusing(() => registry.change(work));
  return [
    entry(context, {
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
      async call(args) {
        const added = await change((draft) => draft.add(args));
        if (isRefusal(added)) return added;
        return answer(
          `Registered "${added.name}": it is now the tool ${added.name}${usage(added)}.${noDescription(added)}`,
          { command: added },
        );
      },
    }),
    entry(context, {
      name: REGISTRY_TOOLS.remove,
      result: { removed: 'string' },
      description: 'Unregister a command; its tool goes at once. Example: {"name": "greet"}',
      inputSchema: objectSchema({ name: NAME }, ['name']),
      async call(args) {
        const removed = await change((draft) => Promise.resolve(draft.remove(args)));
        if (isRefusal(removed)) return removed;
        return answer(`Removed "${String(args['name'])}".`, { removed: String(args['name']) });
      },
    }),
    entry(context, {
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
      async call(args) {
        const updated = await change((draft) => draft.update(args));
        if (isRefusal(updated)) return updated;
        return answer(`Updated "${updated.name}"${usage(updated)}.`, { command: updated });
      },
    }),
    entry(context, {
      name: REGISTRY_TOOLS.list,
      result: { file: 'string', commands: 'array', rejected: 'array', notices: 'array' },
      description:
        'List the registered commands (name, executable, arguments, mode), any entry that is invalid, and any problem with the registry file. Example: {}',
      inputSchema: objectSchema({}, []),
      call() {
        const listed = listing(context);
        const lines = listed.commands.map(
          (c) =>
            `- ${c.name}${c.shadowedBy === undefined ? '' : ` (not served: ${c.shadowedBy})`}: ${c.description ?? c.exec}`,
        );
        const rejected = listed.rejected.map(
          (r) => `- ${r.name} (invalid, not served): ${r.problem}`,
        );
        const text = [
          listed.commands.length === 0 && rejected.length === 0
            ? 'No commands registered. Register one with add_command (help shows how).'
            : `${String(listed.commands.length)} registered command(s):`,
          ...lines,
          ...rejected,
          ...noticeLines(registry),
        ].join('\n');
        return Promise.resolve(answer(text, listed));
      },
    }),
    entry(context, {
      name: REGISTRY_TOOLS.get,
      result: { command: 'object' },
      description: 'Show one registered command in full, as stored. Example: {"name": "greet"}',
      inputSchema: objectSchema({ name: NAME }, ['name']),
      call(args) {
        const name = String(args['name']);
        const found = registry.get(name);
        if (found === undefined) {
          return Promise.resolve(
            refused(
              `no registered command "${name}" (list_commands lists them)`,
              'COMMAND_UNKNOWN',
            ),
          );
        }
        const shown = describeEntry(found, context);
        return Promise.resolve(answer(JSON.stringify(shown, null, 2), { command: shown }));
      },
    }),
    entry(context, {
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
      async call(args) {
        const atomic = args['atomic'] !== false;
        const commands = args['commands'] as unknown[];
        const outcome = await change((draft) => runBatch(draft, commands, atomic));
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
    }),
    entry(context, {
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
      async call(args) {
        const report = await change((draft) =>
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
        return answer(text, { counts, ...report }, counts.errors > 0 && counts.imported === 0);
      },
    }),
    entry(context, {
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
      async call(args) {
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
    }),
    entry(context, {
      name: REGISTRY_TOOLS.help,
      result: { guide: 'string' },
      description:
        'The guide to registering your own commands as tools, with examples. Example: {}',
      inputSchema: objectSchema({}, []),
      call() {
        const text = [
          registryGuide({ file: registry.file, count: registry.commands.length }),
          ...noticeLines(registry),
        ].join('\n');
        return Promise.resolve(answer(text, { guide: text }));
      },
    }),
  ];
}

interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  /** The answer's structuredContent: each field and its JSON type (all of them always there). */
  readonly result: Readonly<Record<string, string>>;
  call(args: Record<string, unknown>): Promise<ToolOutcome>;
}

function entry(context: RegistryToolsContext, spec: ToolSpec): ToolEntry {
  const tool: Tool = {
    name: spec.name,
    description: spec.description,
    inputSchema: spec.inputSchema as Tool['inputSchema'],
    // Like every tool's: the answer, or a refusal's {error: {code, message}} (SPEC §3).
    outputSchema: outputSchemaWithError({
      type: 'object',
      properties: Object.fromEntries(
        Object.entries(spec.result).map(([field, type]) => [field, { type }]),
      ),
      required: Object.keys(spec.result),
    }),
    execution: NEVER_A_TASK,
  };
  return {
    tool,
    fromWords: () => ({}),
    async call(args) {
      const invalid = invalidArguments(context, tool, args);
      if (invalid !== undefined) return invalid;
      return spec.call(args);
    },
  };
}

function objectSchema(
  properties: Record<string, unknown>,
  required: readonly string[],
): Record<string, unknown> {
  return {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

function answer(text: string, structured?: object, isError = false): ToolOutcome {
  const result: CallToolResult = {
    content: [{ type: 'text', text }],
    ...(structured === undefined ? {} : { structuredContent: { ...structured } }),
    ...(isError ? { isError } : {}),
  };
  return { kind: 'answer', result };
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
