// The public API of @ahma/core: named exports only. No MCP SDK, no logger, no process.exit here.
// Only what the other packages use is exported (test/layering/exports.test.ts holds it so); core's
// own tests import the modules they test directly.

export { AHMA_ERROR_CODES, AhmaError, type AhmaErrorCode } from './errors.js';

export { MAX_TIMEOUT_SECONDS } from './definition/schema.js';
export {
  mtdfJsonSchema,
  toolGuidanceJsonSchema,
  renderJsonSchema,
} from './definition/json-schema.js';
export { formatDiagnostic, isError } from './definition/diagnostic.js';
export { DocumentChecker } from './definition/check-document.js';
export { type CheckedDefinition } from './definition/definition-set.js';
export {
  ASYNC_GUIDANCE_KEY,
  DEFAULT_GUIDANCE,
  GUIDANCE_FILE_NAME,
  type GuidanceBlocks,
} from './definition/guidance.js';
export {
  ArgumentValidator,
  callInteractive,
  callMaxOutputTokens,
  EXECUTION_MODES,
  META_PARAMETER_PROPERTIES,
} from './definition/input-schema.js';
export {
  BUILTIN_TOOLS,
  BUILTIN_TOOL_NAMES,
  REGISTRY_TOOLS,
  RESERVED_TOOL_NAMES,
} from './definition/reserved.js';
export {
  loadTools,
  resolveToolsDir,
  type LoadedTool,
  type ResolvedToolsDir,
} from './definition/load.js';
export {
  checkAvailability,
  availableTools,
  formatAvailability,
  type AvailabilityReport,
} from './definition/availability.js';
export { ToolFileReadError } from './definition/tool-files.js';
export { readCatalog } from './definition/catalog.js';
export { closestMatch } from './definition/suggest.js';
export { validateToolFiles, type ValidationReport } from './definition/validate-files.js';

export { realpathLenient, resolveWorkingDirectory } from './argv/paths.js';
export { isInside, overlaps } from './paths/inside.js';
export { prepareInvocation } from './argv/prepare.js';

export { createEngine, type Engine } from './engine.js';
export { livelogKeyVariables } from './definition/livelog-keys.js';
export { type Logger } from './logger.js';
export { resolveSandboxScope } from './sandbox/scope.js';
export { PROFILE_NAMES, profileProblem } from './sandbox/profiles.js';
export { type NetworkMode } from './sandbox/network.js';
export {
  askable,
  grantRules,
  type EgressCaller,
  type GrantDuration,
} from './network/egress-gate.js';
export { type EgressDecision } from './network/egress-proxy.js';
export { authority } from './network/upstream.js';
export { hostPatternProblem } from './network/host-rules.js';
export { GrantLedger, type LedgerGrant } from './state/grant-ledger.js';
export { stateRootCandidates } from './state/state-dir.js';
export { liveServerDirectories } from './state/sweep.js';
export { deniedBy, type DenyEntry } from './sandbox/read-policy.js';
export { type Sandbox } from './sandbox/sandbox.js';
export { packageClosure } from './sandbox/install-check.js';
export { probeAhead } from './sandbox/helper-binary.js';
export { peerCredentialReader, type PeerCredentials } from './sandbox/peer-credentials.js';
export type { Command, ExecutionResult, StepRecord } from './process/execution-types.js';
export { DEFAULT_TIMINGS, type Timings } from './process/timings.js';
export { commandArgv, Executor } from './process/executor.js';
export {
  GREP_DEFAULT_MATCHES,
  GREP_MAX_CONTEXT,
  GREP_MAX_MATCHES,
  grepOutput,
  liveSource,
  OUTPUT_TAIL_MAX_LINES,
  OUTPUT_WINDOW_DEFAULT_BYTES,
  OUTPUT_WINDOW_MAX_BYTES,
  readByteWindow,
  readTail,
  type OutputSource,
} from './process/output-reader.js';
export {
  DEFAULT_MAX_OUTPUT_TOKENS,
  MAX_MAX_OUTPUT_TOKENS,
  MIN_MAX_OUTPUT_TOKENS,
  logNameParts,
  stripAnsi,
} from './process/output.js';
export { descendantsOf, killTree } from './process/kill-tree.js';
export { isLive, procStat } from './process/proc-stat.js';
export { envDenyProblem, tempDirectory, type Environment } from './process/environment.js';
export { runSequence } from './sequence/run-sequence.js';
export { planSequence } from './sequence/plan.js';
export { type OperationSnapshot, type OperationTask } from './operations/operations.js';
export { callLane } from './lanes/call-lane.js';
export { type Lane, type LanePlace } from './lanes/workspace-lanes.js';

export { Registry } from './registry/registry.js';
export { type RegistryEntry } from './registry/registry-file.js';
export { type RegistryDraft } from './registry/draft.js';
export { type RegisteredCommand, ARGUMENT_TYPES } from './registry/command.js';
export { prepareRegisteredCall, registeredInputSchema } from './registry/invocation.js';
export { runBatch, BATCH_OPERATIONS } from './registry/batch.js';
export { importConfig, exportConfig, DEFAULT_EXPORT_PATH } from './registry/config-file.js';
export { writeFileAtomicAt } from './registry/write-atomic.js';

export { livelogTask } from './livelog/task.js';
export { resolveLivelogStart } from './livelog/start.js';
export { type Verdict } from './livelog/detector.js';
