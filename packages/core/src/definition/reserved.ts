// Names of the server's built-in tools. Definitions may neither use them nor produce them.

/** Built-in execution tools (SPEC §3). */
export const BUILTIN_TOOL_NAMES = ['sandboxed_shell', 'status', 'await', 'cancel'] as const;

/** Built-in command-registry tools (SPEC §8). */
export const REGISTRY_TOOL_NAMES = [
  'add_command',
  'remove_command',
  'update_command',
  'list_commands',
  'get_command',
  'batch_exec',
  'import_config',
  'export_config',
  'help',
] as const;

export const RESERVED_TOOL_NAMES: ReadonlySet<string> = new Set([
  ...BUILTIN_TOOL_NAMES,
  ...REGISTRY_TOOL_NAMES,
]);

/** The built-in tool a sequence step may name besides defined tools. */
export const SHELL_TOOL_NAME = 'sandboxed_shell';
