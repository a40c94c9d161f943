// help (FR4.9, NFR3.2): the whole guide to the command registry, with an example of every tool.

export function registryGuide(state: { readonly file: string; readonly count: number }): string {
  return `# Registering your own commands as tools

Any executable becomes an MCP tool with one call, and stays one across restarts. It runs like every
other tool here: in the sandbox (it may write only inside the sandbox scope), with a timeout, its
output bounded, synchronously or in the background, cancellable, and logged for audit.

Registry file: ${state.file} (${String(state.count)} command(s) registered)

## In two calls

1. add_command {"name": "greet", "exec": "./scripts/greet.sh", "description": "Greet someone",
   "args": {"who": {"type": "string", "required": true}}}
2. greet {"who": "world"}        → runs ./scripts/greet.sh world

The new tool is listed at once (the client gets notifications/tools/list_changed).

## Fields of a command

- name: the tool name, ASCII letters, digits and _, not digits only (unique: not a built-in tool,
  a tool from a tool file, or another registered command; use update_command to change one).
- exec: the executable. Absolute (/usr/bin/wc), relative to the sandbox scope (./scripts/x.sh), or
  a bare name looked up on PATH (wc). It must exist and be executable when registered; if it goes
  away later, calls fail with EXEC_NOT_FOUND saying so.
- description: what it does; agents read it as the tool's description. Optional (instant-mcp
  registers commands without one): the tool then says "Runs <exec>.", so give one.
- args: the arguments, in the order they are passed, each one argv element (never a shell line):
    {"pattern": {"type": "string", "required": true, "description": "What to find"},
     "file":    {"type": "string", "format": "path"},
     "count":   {"type": "integer", "flag": "-m"},
     "ignore_case": {"type": "boolean", "flag": "-i"}}
  grep_in {"pattern": "todo", "file": "src/a.ts", "count": 3, "ignore_case": true}
    → grep todo /abs/scope/src/a.ts -m 3 -i
  - type: string, number, integer or boolean.
  - Without "flag" a value is a positional argument (a boolean is passed as true or false); a
    positional value starting with "-" is refused, since the program would read it as an option.
  - With "flag" the value follows the flag; a boolean passes the flag alone when true.
  - format "path": resolved against the working directory and refused outside the sandbox scope.
  - An argument not given is left out.
- async: true runs it in the background: the call answers with an operation id at once, and the
  result arrives by itself when it ends (await or status fetch it too). Default false.
- timeout: "30s", "5m", "1h" or "1h30m"; the command is killed after it. Default: the server's.

Every registered tool also takes the meta-parameters working_directory (inside the scope),
timeout_seconds, execution_mode ("Synchronous" or "AsyncResultPush") and max_output_tokens.

## The tools

- add_command {"name", "exec", "description"?, "args"?, "async"?, "timeout"?}
- update_command {"name": "greet", "timeout": "5m"}          fields given replace; null unsets one
- remove_command {"name": "greet"}
- list_commands {}                                           every command, and any invalid entry
- get_command {"name": "greet"}                              one command as stored
- batch_exec {"commands": [
    {"operation": "add_command", "params": {"name": "lint", "exec": "./scripts/lint.sh", "description": "Lint"}},
    {"operation": "add_command", "params": {"name": "test", "exec": "./scripts/test.sh", "description": "Test", "async": true}},
    {"operation": "remove_command", "params": {"name": "old"}}
  ], "atomic": true}
  atomic (default): every operation is checked in order and either all take effect or none;
  atomic false: each succeeds or fails on its own, with one result per operation.
- export_config {"path": ".ahma/commands.yaml"}              YAML, inside the scope (the default path)
- import_config {"path": ".ahma/commands.yaml", "overwrite": false}
  YAML or JSON: export_config's files, and instant-mcp's export or state.json as they are. Names
  already registered are skipped unless overwrite is true; each bad entry is reported, the others
  still import.
- help {}                                                    this guide

## Trust

A registered command runs with the server's rights, inside the same sandbox as every command. The
registry file lies in the sandbox scope by default: anything that can write it (you, a command you
run) can add commands, which run under the same sandbox.`;
}
