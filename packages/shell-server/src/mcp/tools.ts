// The tools a server offers: one per loaded definition leaf, plus the built-ins sandboxed_shell,
// status, await and cancel. Handlers are generic: nothing here knows any particular tool (R1.3).
import {
  AhmaError,
  EXECUTION_MODES,
  META_PARAMETER_PROPERTIES,
  prepareInvocation,
  resolveWorkingDirectory,
  type ArgumentValidator,
  type Command,
  type Engine,
  type ExecutionResult,
  type LoadedTool,
  type OperationSnapshot,
  type OperationTask,
  type StepRecord,
  planSequence,
  runSequence,
} from '@ahma/core';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { auditedArgv } from './audit-argv.js';
import { startHeartbeat, type ProgressReporter } from './heartbeat.js';
import {
  COMMAND_OUTPUT_SCHEMA,
  commandResult,
  describeFinished,
  finishedResult,
  OPERATIONS_OUTPUT_SCHEMA,
  startedResult,
  ahmaToolError,
  outputSchemaWithError,
  toolError,
} from './results.js';

/** What every tool handler can use. */
export interface ToolContext {
  readonly engine: Engine;
  /** The definition tools by name, for the steps of sequences (the current set, after reloads). */
  readonly definitionTools: () => ReadonlyMap<string, LoadedTool>;
  readonly validator: ArgumentValidator;
  readonly logger: Logger;
  /** Default command timeout, seconds (--timeout). */
  readonly defaultTimeoutSeconds: number;
  /** --sync: every call blocks (R3.4). */
  readonly forceSync: boolean;
  /** --inline-wait: how long an async call waits for its command before answering `started`. */
  readonly inlineWaitMs: number;
  /** How often an open call with a progressToken hears progress (heartbeat.ts). */
  readonly heartbeatMs: number;
  /** The call of this operation was answered `started`: push its completion (completion-push.ts). */
  readonly pushLater: (operationId: string) => void;
}

/** A ToolContext without the current definition tools, which the tool set adds. */
export type ToolContextBase = Omit<ToolContext, 'definitionTools'>;

/** The call being served: its cancellation and, when the request asked for it, its progress. */
export interface CallContext {
  readonly signal: AbortSignal;
  readonly progress: ProgressReporter | undefined;
}

export interface ToolEntry {
  readonly tool: Tool;
  call(args: Record<string, unknown>, call: CallContext): Promise<CallToolResult>;
  /** One-shot CLI (R9): the arguments that raw words after `--` stand for. */
  fromWords(words: readonly string[]): Record<string, unknown>;
}

/** A command ready to run: what, where, for how long, and what to clean up afterwards. */
interface PreparedCommand {
  readonly command: Command;
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly timeoutSeconds: number | undefined;
  cleanup(): Promise<void>;
}

/** Runs a prepared command as an operation, blocking or in the background. */
function runCommand(
  context: ToolContext,
  name: string,
  blocking: boolean,
  prepared: PreparedCommand,
  call: CallContext,
): Promise<CallToolResult> {
  const { engine } = context;
  const timeoutSeconds = prepared.timeoutSeconds ?? context.defaultTimeoutSeconds;
  return runOperation(
    context,
    name,
    blocking,
    async (signal, id) => {
      try {
        const result = await engine.executor.run({
          command: prepared.command,
          cwd: prepared.cwd,
          timeoutMs: timeoutSeconds * 1000,
          signal,
          logName: id,
        });
        audit(context, id, name, prepared.argv, prepared.cwd, result);
        return result;
      } finally {
        await prepared.cleanup();
      }
    },
    call,
  );
}

/** NFR4.3: one audit line per execution; argv bounded, with a SHA-256 of the full argv. */
export function audit(
  context: ToolContext,
  operation: string,
  tool: string,
  argv: readonly string[],
  cwd: string,
  result: Pick<ExecutionResult, 'status' | 'exitCode' | 'signal' | 'durationMs'>,
): void {
  context.logger.info(
    {
      audit: {
        operation,
        tool,
        ...auditedArgv(argv),
        scope: context.engine.sandbox.scope,
        cwd,
        status: result.status,
        exit_code: result.exitCode,
        signal: result.signal,
        duration_ms: Math.round(result.durationMs),
      },
    },
    'execution',
  );
}

/**
 * Whether a call blocks: --sync makes every call block (R3.4); otherwise the call's execution_mode
 * (R10.1) overrides the tool's own mode (R2.6).
 */
function blocks(context: ToolContext, toolIsSynchronous: boolean, args: Record<string, unknown>) {
  if (context.forceSync) return true;
  const mode = args['execution_mode'];
  if (mode === EXECUTION_MODES[0]) return true;
  if (mode === EXECUTION_MODES[1]) return false;
  return toolIsSynchronous;
}

/**
 * One operation. A blocking call waits for it to end. An async call waits up to the inline wait
 * (SPEC §3) and answers with the finished result when the command ends in time; otherwise it
 * answers `started` and the completion is pushed later. While the call is open it sends progress
 * heartbeats, and the client cancelling the request kills the command.
 */
export async function runOperation(
  context: ToolContext,
  name: string,
  blocking: boolean,
  task: OperationTask,
  call: CallContext,
): Promise<CallToolResult> {
  const { operations } = context.engine;
  const operation = operations.start(name, task);
  const waitMs = blocking ? undefined : context.inlineWaitMs;
  if (waitMs !== 0) {
    const onAbort = () => operations.cancel(operation.id, 'the client cancelled the request');
    call.signal.addEventListener('abort', onAbort, { once: true });
    const stop = startHeartbeat(
      call.progress,
      context.heartbeatMs,
      (seconds) => `${operation.id} (${name}) running for ${String(seconds)} s`,
    );
    try {
      const [finished] = await operations.await([operation.id], waitMs);
      if (finished !== undefined && finished.status !== 'running') return finishedResult(finished);
    } finally {
      await stop();
      call.signal.removeEventListener('abort', onAbort);
    }
  }
  // Checked and registered in one step: a completion from now on finds the id and is pushed.
  const [now] = operations.status([operation.id]);
  if (now !== undefined && now.status !== 'running') return finishedResult(now);
  // A request the client cancelled gets no answer, so nothing may later name its operation (the
  // command may still be dying within its kill grace).
  if (call.signal.aborted) return startedResult(operation);
  context.pushLater(operation.id);
  return startedResult(operation);
}

export function invalidArguments(
  context: ToolContext,
  tool: Tool,
  args: unknown,
): CallToolResult | undefined {
  let errors;
  try {
    errors = context.validator.validate(tool.inputSchema, args);
  } catch (error) {
    // Unreachable for a loaded file (its schemas are compiled when it loads), but a call must
    // never become a protocol error (SPEC §2).
    context.logger.error({ tool: tool.name, err: error }, 'input schema cannot be compiled');
    return toolError(
      `${tool.name} cannot check its arguments: ${String(error)}`,
      'ARGUMENTS_INVALID',
    );
  }
  if (errors.length === 0) return undefined;
  return toolError(
    `Invalid arguments for ${tool.name}:\n${errors.map((e) => `- ${e.message}`).join('\n')}`,
    'ARGUMENTS_INVALID',
  );
}

/** Turns an expected refusal (a path outside the scope, …) into a tool error for the agent. */
export async function refusing<T>(work: () => Promise<T>): Promise<T | CallToolResult> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AhmaError) return ahmaToolError(error);
    throw error;
  }
}

export const isResult = (value: unknown): value is CallToolResult =>
  typeof value === 'object' && value !== null && 'content' in value;

/**
 * A raw word as the value of a parameter of `type`: the word itself for a string, else its JSON
 * value ("3", "true"); a word that is not JSON stays a string, so the argument check names the
 * parameter and its type instead of the parse failing.
 */
function wordValue(word: string, type: string | undefined): unknown {
  if (type === undefined || type === 'string') return word;
  try {
    return JSON.parse(word) as unknown;
  } catch {
    return word;
  }
}

/** The MCP tool of a loaded definition leaf. */
export function definitionTool(loaded: LoadedTool, context: ToolContext): ToolEntry {
  const tool: Tool = {
    name: loaded.name,
    description: loaded.description,
    inputSchema: loaded.inputSchema as Tool['inputSchema'],
    outputSchema: outputSchemaWithError(COMMAND_OUTPUT_SCHEMA),
  };
  return {
    tool,
    // Words fill the positionals in order; an array positional takes all that remain.
    fromWords(words) {
      const args: Record<string, unknown> = {};
      let rest = [...words];
      for (const positional of loaded.leaf.positionals) {
        if (rest.length === 0) break;
        if (positional.type === 'array') {
          args[positional.name] = rest.map((word) => wordValue(word, positional.items?.type));
          rest = [];
        } else {
          args[positional.name] = wordValue(rest.shift() ?? '', positional.type);
        }
      }
      return args;
    },
    async call(args, call) {
      const invalid = invalidArguments(context, tool, args);
      if (invalid !== undefined) return invalid;
      if (loaded.leaf.sequence !== undefined) return runSequenceTool(context, loaded, args, call);
      const prepared = await refusing(() =>
        prepareInvocation(loaded.leaf, args, {
          scope: context.engine.sandbox.scope,
          tempRoot: context.engine.state.serverDir,
        }),
      );
      if (isResult(prepared)) return prepared;
      return runCommand(
        context,
        loaded.name,
        blocks(context, loaded.leaf.synchronous, args),
        { ...prepared, command: { kind: 'argv', argv: prepared.argv } },
        call,
      );
    },
  };
}

/**
 * A sequence tool (SPEC §9): one operation that runs the steps one after another; the result is
 * their transcript. Every step's arguments are checked before the first one runs.
 */
async function runSequenceTool(
  context: ToolContext,
  loaded: LoadedTool,
  args: Record<string, unknown>,
  call: CallContext,
): Promise<CallToolResult> {
  const { engine } = context;
  const plans = await refusing(() =>
    planSequence(loaded.leaf, args, {
      tools: context.definitionTools(),
      validator: context.validator,
      scope: engine.sandbox.scope,
      tempRoot: engine.state.serverDir,
      defaultTimeoutSeconds: context.defaultTimeoutSeconds,
    }),
  );
  if (isResult(plans)) return plans;
  // The sequence's own limit: per call > the leaf's (inherited) > --timeout.
  const timeout = args['timeout_seconds'];
  const timeoutSeconds =
    typeof timeout === 'number'
      ? timeout
      : (loaded.leaf.timeoutSeconds ?? context.defaultTimeoutSeconds);
  return runOperation(
    context,
    loaded.name,
    blocks(context, loaded.leaf.synchronous, args),
    (signal, id) =>
      runSequence(plans, {
        executor: engine.executor,
        delayMs: loaded.leaf.stepDelayMs,
        timeoutMs: timeoutSeconds * 1000,
        signal,
        logName: id,
        onStep: (step: StepRecord) =>
          audit(context, id, `${loaded.name} › ${step.label}`, step.argv, step.cwd ?? '', {
            status: step.status === 'refused' || step.status === 'not_run' ? 'failed' : step.status,
            exitCode: step.exitCode,
            signal: null,
            durationMs: step.durationMs,
          }),
      }),
    call,
  );
}

/** sandboxed_shell: a bash script in the sandbox (pipes and redirects allowed). */
export function shellTool(context: ToolContext, asyncGuidance: string): ToolEntry {
  const tool: Tool = {
    name: 'sandboxed_shell',
    description: `${asyncGuidance}\n\nRun a bash script inside the sandbox: pipes, redirects and && work; writes are confined to the project (the sandbox scope) and the temp directory. Prefer a dedicated tool when one exists.`,
    inputSchema: {
      type: 'object',
      properties: {
        command: { type: 'string', minLength: 1, description: 'The bash script to run (bash -c).' },
        ...META_PARAMETER_PROPERTIES,
      },
      required: ['command'],
      additionalProperties: false,
    },
    outputSchema: outputSchemaWithError(COMMAND_OUTPUT_SCHEMA),
  };
  return {
    tool,
    fromWords: (words) => (words.length === 0 ? {} : { command: words.join(' ') }),
    async call(args, call) {
      const invalid = invalidArguments(context, tool, args);
      if (invalid !== undefined) return invalid;
      const cwd = await refusing(() =>
        resolveWorkingDirectory(
          typeof args['working_directory'] === 'string' ? args['working_directory'] : undefined,
          context.engine.sandbox.scope,
        ),
      );
      if (isResult(cwd)) return cwd;
      const script = String(args['command']);
      const timeout = args['timeout_seconds'];
      return runCommand(
        context,
        tool.name,
        blocks(context, false, args),
        {
          command: { kind: 'shell', script },
          argv: ['bash', '-c', script],
          cwd,
          timeoutSeconds: typeof timeout === 'number' ? timeout : undefined,
          cleanup: () => Promise.resolve(),
        },
        call,
      );
    },
  };
}

/**
 * `await`'s wait when the call names none: below the 60 s after which common clients (the SDK
 * clients, MCP Inspector) give up on a request, so the agent gets what is still running instead of
 * a timeout error.
 */
export const AWAIT_DEFAULT_SECONDS = 50;

const idsProperty = {
  type: 'array',
  items: { type: 'string' },
  description: 'Operation ids; omit for all.',
};

/**
 * The operations as a result. `isError` says whether any of the operations the agent named (or
 * waited for) failed; a snapshot of the whole history is not an error because an old one failed.
 */
function operationsResult(
  snapshots: readonly OperationSnapshot[],
  heading: string,
  named: boolean,
): CallToolResult {
  const operations = snapshots.map(commandResult);
  const text =
    operations.length === 0
      ? `${heading}: no operations.`
      : operations
          .map((o) =>
            o.status === 'running' ? `${o.operation_id} running (${o.tool})` : describeFinished(o),
          )
          .join('\n\n');
  return {
    content: [{ type: 'text', text }],
    structuredContent: { operations },
    isError: named && operations.some((o) => o.status !== 'running' && o.status !== 'completed'),
  };
}

/** status, await and cancel: the operations of this server. */
export function operationTools(context: ToolContext): ToolEntry[] {
  const { operations } = context.engine;
  const guard = async (work: () => Promise<CallToolResult> | CallToolResult) => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof AhmaError) return ahmaToolError(error);
      throw error;
    }
  };
  const status: Tool = {
    name: 'status',
    description:
      'Snapshot of operations (running and recently finished), without waiting. Finished ones include their exit code and output.',
    inputSchema: { type: 'object', properties: { ids: idsProperty }, additionalProperties: false },
    outputSchema: outputSchemaWithError(OPERATIONS_OUTPUT_SCHEMA),
  };
  const wait: Tool = {
    name: 'await',
    description:
      'Wait until the named operations (or, with no ids, all running ones) finish, then return their results; those still running after the timeout are returned as running (call again to keep waiting). Use it only when you cannot continue without a result.',
    inputSchema: {
      type: 'object',
      properties: {
        ids: idsProperty,
        timeout_seconds: {
          type: 'number',
          exclusiveMinimum: 0,
          maximum: 86400,
          description: `Stop waiting after this many seconds and return what is still running (default ${String(AWAIT_DEFAULT_SECONDS)}, below the 60 s request timeout of common clients).`,
        },
      },
      additionalProperties: false,
    },
    outputSchema: outputSchemaWithError(OPERATIONS_OUTPUT_SCHEMA),
  };
  const cancel: Tool = {
    name: 'cancel',
    description: "Cancel an operation: its processes are killed and it ends 'cancelled'.",
    inputSchema: {
      type: 'object',
      properties: {
        id: { type: 'string', description: 'The operation id.' },
        reason: { type: 'string', description: 'Why, for the record.' },
      },
      required: ['id'],
      additionalProperties: false,
    },
    outputSchema: outputSchemaWithError(COMMAND_OUTPUT_SCHEMA),
  };
  const ids = (args: Record<string, unknown>) => args['ids'] as string[] | undefined;
  const fromWords = (words: readonly string[]) => (words.length === 0 ? {} : { ids: [...words] });
  return [
    {
      tool: status,
      fromWords,
      call: (args) =>
        guard(
          () =>
            invalidArguments(context, status, args) ??
            operationsResult(operations.status(ids(args)), 'status', ids(args) !== undefined),
        ),
    },
    {
      tool: wait,
      fromWords,
      call: (args, call) =>
        guard(async () => {
          const invalid = invalidArguments(context, wait, args);
          if (invalid !== undefined) return invalid;
          const seconds =
            typeof args['timeout_seconds'] === 'number'
              ? args['timeout_seconds']
              : AWAIT_DEFAULT_SECONDS;
          const named = ids(args);
          const stop = startHeartbeat(
            call.progress,
            context.heartbeatMs,
            (elapsed) =>
              `waiting for ${named === undefined ? 'every running operation' : named.join(', ')} (${String(elapsed)} s)`,
          );
          try {
            return operationsResult(
              await operations.await(named, seconds * 1000, call.signal),
              'await',
              true,
            );
          } finally {
            await stop();
          }
        }),
    },
    {
      tool: cancel,
      fromWords: (words) => (words[0] === undefined ? {} : { id: words[0] }),
      call: (args) =>
        guard(async () => {
          const invalid = invalidArguments(context, cancel, args);
          if (invalid !== undefined) return invalid;
          const id = String(args['id']);
          const reason = typeof args['reason'] === 'string' ? args['reason'] : undefined;
          const wasRunning = operations.cancel(id, reason);
          const [snapshot] = await operations.await([id]);
          if (snapshot === undefined) return toolError(`no operation ${id}`, 'OPERATION_UNKNOWN');
          const result = finishedResult(snapshot);
          if (!wasRunning) {
            result.content.unshift({
              type: 'text',
              text: `${id} had already finished (${snapshot.status}).`,
            });
            return result;
          }
          // The cancel itself succeeded, whatever the command's status says.
          return { ...result, isError: false };
        }),
    },
  ];
}
