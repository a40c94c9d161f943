// @ahma/introspect: a program's interface read from its help text, and its MTDF tool file.
export { introspect, type IntrospectOptions, type Introspection } from './introspect.js';
export { writeDefinition, toolName, type WrittenDefinition } from './mtdf/write.js';
export { parseHelp, parserFor } from './parse/index.js';
export type * from './parse/model.js';
export { runIntrospect, USAGE } from './run-cli.js';
export { SandboxedHelp, type HelpRun, type SandboxedHelpOptions } from './run/sandboxed-help.js';
export { walkHelp, HelpNotFound, type Discovered } from './run/walk.js';
export { INTROSPECT_VERSION } from './version.js';
