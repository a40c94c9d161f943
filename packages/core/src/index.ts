// The public API of @ahma/core: named exports only. No MCP SDK, no logger, no process.exit here.

export { AhmaError, type AhmaErrorCode } from './errors.js';

export {
  toolDefinitionSchema,
  toolGuidanceSchema,
  MAX_TIMEOUT_SECONDS,
  type ToolDefinition,
  type SubcommandDefinition,
  type ArgumentDefinition,
  type SequenceStep,
  type AvailabilityCheck,
  type ToolGuidance,
} from './definition/schema.js';
export {
  mtdfJsonSchema,
  toolGuidanceJsonSchema,
  renderJsonSchema,
  type JsonSchema,
} from './definition/json-schema.js';
export { formatDiagnostic, type Diagnostic } from './definition/diagnostic.js';
export {
  DocumentChecker,
  type DefinitionCheck,
  type GuidanceCheck,
} from './definition/check-document.js';
export {
  checkDefinitionSet,
  stepTarget,
  type CheckedDefinition,
  type SetCheckResult,
} from './definition/definition-set.js';
export {
  flattenDefinition,
  describeLeaf,
  splitCommand,
  SEQUENCE_COMMAND,
  type ToolLeaf,
} from './definition/flatten.js';
export {
  DEFAULT_GUIDANCE,
  ASYNC_GUIDANCE_KEY,
  SYNC_GUIDANCE_KEY,
  GUIDANCE_FILE_NAME,
  mergeGuidance,
  type GuidanceBlocks,
} from './definition/guidance.js';
export {
  leafInputSchema,
  ArgumentValidator,
  META_PARAMETERS,
  isMetaParameter,
  type ArgumentError,
  type MetaParameter,
} from './definition/input-schema.js';
export {
  BUILTIN_TOOL_NAMES,
  REGISTRY_TOOL_NAMES,
  RESERVED_TOOL_NAMES,
  SHELL_TOOL_NAME,
} from './definition/reserved.js';
export { MAX_TOOL_NAME_LENGTH } from './definition/semantic.js';
export {
  loadTools,
  resolveToolsDir,
  TOOLS_DIR_ENV,
  type LoadedTool,
  type LoadOptions,
  type LoadResult,
  type ResolvedToolsDir,
  type ToolsDirSource,
} from './definition/load.js';
export { ToolFileReadError } from './definition/tool-files.js';
export {
  validateToolFiles,
  type FileReport,
  type ValidationReport,
} from './definition/validate-files.js';

export { buildArgv, flagOf, type ArgvLeaf } from './argv/build.js';
export { resolvePathInScope, resolveWorkingDirectory, isInside } from './argv/paths.js';
export { createFileArgWriter, type FileArgWriter } from './argv/file-args.js';
export {
  prepareInvocation,
  type InvocationContext,
  type PreparedInvocation,
} from './argv/prepare.js';
