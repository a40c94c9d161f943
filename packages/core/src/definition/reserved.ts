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
  /** R15.3: reads an operation's whole output, a window at a time. */
  output: 'output',
  /** R15.4: writes to an interactive command and returns what it printed next. */
  writeStdin: 'write_stdin',
  /** Lists and reveals bundled catalogs (SPEC §3 bundles on demand). */
  activateTools: 'activate_tools',
} as const;

export const BUILTIN_TOOL_NAMES: readonly string[] = Object.values(BUILTIN_TOOLS);

/**
 * Built-in command-registry tools (SPEC §8), in list order. Reserved whether or not --registry is
 * on: turning the registry on must not make a tool file invalid.
 */
export const REGISTRY_TOOLS = {
  add: 'add_command',
  remove: 'remove_command',
  update: 'update_command',
  list: 'list_commands',
  get: 'get_command',
  batch: 'batch_exec',
  import: 'import_config',
  export: 'export_config',
  help: 'help',
} as const;

export const REGISTRY_TOOL_NAMES: readonly string[] = Object.values(REGISTRY_TOOLS);

export const RESERVED_TOOL_NAMES: ReadonlySet<string> = new Set([
  ...BUILTIN_TOOL_NAMES,
  ...REGISTRY_TOOL_NAMES,
]);

/** The built-in tool a sequence step may name besides defined tools. */
export const SHELL_TOOL_NAME = BUILTIN_TOOLS.shell;
