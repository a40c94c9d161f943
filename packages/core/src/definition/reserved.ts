// Names of the server's built-in tools. Definitions may neither use them nor produce them.

/**
 * The server's built-in tools (SPEC §3), in the order tools/list shows them: the one list the
 * server names its tools from and the reserved names derive from. activate_tools is hidden by
 * --no-tool-discovery, but a definition may not take its name either way: turning discovery back on
 * must not make a tool file invalid.
 */
export const BUILTIN_TOOLS = {
  shell: 'sandboxed_shell',
  status: 'status',
  await: 'await',
  cancel: 'cancel',
  /** Lists and reveals bundled catalogs (SPEC §3 bundles on demand). */
  activateTools: 'activate_tools',
} as const;

export const BUILTIN_TOOL_NAMES: readonly string[] = Object.values(BUILTIN_TOOLS);

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
export const SHELL_TOOL_NAME = BUILTIN_TOOLS.shell;
