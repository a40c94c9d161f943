// The public API of @ahma/core: named exports only. No MCP SDK, no logger, no process.exit here.

export { AHMA_ERROR_CODES, AhmaError, type AhmaErrorCode } from './errors.js';

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
export {
  formatDiagnostic,
  isError,
  type Diagnostic,
  type Severity,
} from './definition/diagnostic.js';
export {
  DocumentChecker,
  type DefinitionCheck,
  type GuidanceCheck,
} from './definition/check-document.js';
export {
  checkDefinitionSet,
  resolveStep,
  stepTarget,
  type StepResolution,
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
  EXECUTION_MODES,
  META_PARAMETERS,
  META_PARAMETER_PROPERTIES,
  isMetaParameter,
  type ArgumentError,
  type ExecutionMode,
  type MetaParameter,
} from './definition/input-schema.js';
export {
  ACTIVATE_TOOLS_NAME,
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
export {
  checkAvailability,
  availableTools,
  formatAvailability,
  DEFAULT_AVAILABILITY_TIMEOUT_MS,
  DEFAULT_AVAILABILITY_CONCURRENCY,
  type AvailabilityOptions,
  type AvailabilityReport,
  type AvailabilityResult,
  type AvailabilitySource,
  type AvailabilityStatus,
  type DeclaredCheck,
  type UnavailableTool,
} from './definition/availability.js';
export { ToolFileReadError } from './definition/tool-files.js';
export { readCatalog, type CatalogRead } from './definition/catalog.js';
export { closestMatch } from './definition/suggest.js';
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

export { createEngine, type Engine, type EngineOptions } from './engine.js';
export { silentLogger, type Logger } from './logger.js';
export { resolveSandboxScope, SANDBOX_SCOPE_ENV, type ScopeSource } from './sandbox/scope.js';
export {
  createSandbox,
  writablePaths,
  type Sandbox,
  type SandboxMechanism,
  type SandboxOptions,
  type WritablePathsOptions,
} from './sandbox/sandbox.js';
export { checkInstallLocation, packageClosure } from './sandbox/install-check.js';
export { STATE_DIR_ENV, type StateDir } from './state/state-dir.js';
export { LogStore, LogFile, DEFAULT_LOG_BUDGET_BYTES, type LogNotes } from './state/log-store.js';
export type { SweepReport } from './state/sweep.js';
export type { LabelledPath } from './state/paths.js';
export {
  defaultHelperPath,
  probeLandlock,
  LANDLOCK_UNAVAILABLE_EXIT,
  type ProbeResult,
} from './sandbox/helper-binary.js';
export { seatbeltProfile, seatbeltArgv, SANDBOX_EXEC } from './sandbox/seatbelt.js';
export {
  commandEnvironment,
  NON_INTERACTIVE_ENV,
  CACHE_ENV,
  type Environment,
} from './process/environment.js';
export {
  Executor,
  shellArgv,
  DEFAULT_GRACE_MS,
  type Command,
  type ExecutionRequest,
  type ExecutionResult,
  type ExecutionStatus,
  type ExecutorOptions,
} from './process/executor.js';
export {
  OutputCollector,
  stripAnsi,
  presentLogs,
  logPaths,
  DEFAULT_HEAD_BYTES,
  DEFAULT_TAIL_BYTES,
  type CollectedOutput,
  type OutputLimits,
} from './process/output.js';
export {
  ShellPool,
  DEFAULT_POOL_SIZE,
  DEFAULT_POOL_IDLE_MS,
  type ShellPoolOptions,
  type ShellPoolStats,
} from './process/shell-pool.js';
export {
  runSequence,
  type StepPlan,
  type PreparedStep,
  type StepRecord,
  type StepStatus,
  type SequenceOptions,
} from './sequence/run-sequence.js';
export { planSequence, type PlanContext } from './sequence/plan.js';
export {
  OperationManager,
  type OperationSnapshot,
  type OperationStatus,
  type OperationResult,
  type OperationTask,
  type AlertListener,
  type CompletionListener,
  type OperationAlert,
  type OperationManagerOptions,
} from './operations/operations.js';

export {
  livelogSchema,
  toolTypeSchema,
  LIVELOG_DEFAULTS,
  type LivelogDefinition,
  type ToolType,
} from './definition/livelog-schema.js';
export { resolveLivelog, type LivelogSettings } from './definition/livelog-settings.js';
export { livelogTask, type LivelogTaskOptions } from './livelog/task.js';
export { runLivelog, MAX_PENDING_CHUNKS, type LivelogRun } from './livelog/monitor.js';
export {
  openAiDetector,
  isClean,
  DetectorError,
  type Detector,
  type OpenAiDetectorOptions,
  type Verdict,
} from './livelog/detector.js';
export { LineSplitter, MAX_LINE_CHARS } from './livelog/lines.js';
export { Chunker, MAX_CHUNK_CHARS, type ChunkerOptions } from './livelog/chunker.js';
