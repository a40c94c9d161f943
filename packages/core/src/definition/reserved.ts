// Names of the server's built-in tools. Definitions may neither use them nor produce them.

/** The built-in that lists and reveals bundled catalogs (SPEC §3 bundles on demand). */
export const ACTIVATE_TOOLS_NAME = 'activate_tools';

/**
 * Built-in tools (SPEC §3), in the order tools/list shows them. activate_tools is hidden by
 * --no-tool-discovery, but a definition may not take its name either way: turning discovery back on
 * must not make a tool file invalid.
 */
export const BUILTIN_TOOL_NAMES = [
  'sandboxed_shell',
  'status',
  'await',
  'cancel',
  ACTIVATE_TOOLS_NAME,
] as const;

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
