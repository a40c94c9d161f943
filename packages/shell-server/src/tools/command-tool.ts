// The pipeline every command tool shares (sandboxed_shell, a definition's tool, a registered
// command): the call's arguments must match the tool's input schema; then its workspace lane is
// decided; then the tool turns the arguments into a command; then the command runs as an operation
// (calls/run-command.ts: the sandbox, the lane's turn, audit, bounded output) and the call answers
// with it. A refusal at any step answers before the next one: nothing has run. A tool gives only
// what differs — its descriptor, its own mode, lane and network, and how arguments become a command.
import {
  callInteractive,
  callLane,
  callMaxOutputTokens,
  type Command,
  type Lane,
  type NetworkMode,
} from '@ahma/core';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { blocks } from '../calls/operation-runner.js';
import { runCommand } from '../calls/run-command.js';
import { COMMAND_OUTPUT_SCHEMA, outputSchemaWithError } from '../calls/results.js';
import {
  RUNS_AS_TASK,
  invalidArguments,
  isRefusal,
  refusing,
  type CallContext,
  type ToolContext,
  type ToolEntry,
  type ToolOutcome,
} from './tool.js';

/** What a tool whose call runs an operation says about itself. */
export interface OperationToolSpec {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Tool['inputSchema'];
  /** One-shot CLI: the arguments the raw words after `--` stand for. */
  fromWords(words: readonly string[]): Record<string, unknown>;
}

/**
 * A tool whose call runs an operation (a command, a sequence, a monitor): it answers with the
 * operation's result, or a refusal's {error}, and may be called as a task. `run` only ever sees
 * arguments that match the input schema.
 */
export function operationTool(
  context: Pick<ToolContext, 'validator' | 'logger'>,
  spec: OperationToolSpec,
  run: (args: Record<string, unknown>, call: CallContext) => Promise<ToolOutcome>,
): ToolEntry {
  const tool: Tool = {
    name: spec.name,
    description: spec.description,
    inputSchema: spec.inputSchema,
    outputSchema: outputSchemaWithError(COMMAND_OUTPUT_SCHEMA),
    execution: RUNS_AS_TASK,
  };
  return {
    tool,
    fromWords: (words) => spec.fromWords(words),
    async call(args, call) {
      return invalidArguments(context, tool, args) ?? run(args, call);
    },
  };
}

/** What a call's arguments became: the command, where it runs, and for how long. */
export interface CommandPlan {
  readonly command: Command;
  /** The working directory, already resolved inside the sandbox scope. */
  readonly cwd: string;
  /** The call's limit, else the tool's; undefined: the server's (--timeout). */
  readonly timeoutSeconds: number | undefined;
  /**
   * Removes what building the command wrote (a definition's file_arg files): run once the command
   * has ended, or at once when the call is answered by an identical call already waiting instead.
   */
  readonly cleanup?: () => Promise<void>;
}

export interface CommandToolSpec extends OperationToolSpec {
  /**
   * Whether a call blocks until its command ends when it names no execution_mode; --sync makes
   * every call block whatever this says.
   */
  readonly synchronous: boolean;
  /**
   * The lane its tool file declares (undefined: exclusive). A call's `concurrency` may choose
   * another, but never one with more write access than this one: a read_only tool stays read_only.
   */
  readonly lane?: Lane | undefined;
  /** The tool file's network mode, when it asks for less than the server's (never more). */
  readonly network?: NetworkMode | undefined;
  /**
   * The command the checked arguments stand for. Throwing an AhmaError (a path outside the scope,
   * an executable gone) refuses the call with its code; anything it wrote must then be gone.
   */
  toCommand(args: Readonly<Record<string, unknown>>): Promise<CommandPlan>;
}

export function defineCommandTool(context: ToolContext, spec: CommandToolSpec): ToolEntry {
  return operationTool(context, spec, async (args, call) => {
    // The lane first: a call refused for it has nothing prepared that would need cleaning up.
    const lane = await refusing(() => callLane(spec.name, spec.lane, args));
    if (isRefusal(lane)) return lane;
    const plan = await refusing(() => spec.toCommand(args));
    if (isRefusal(plan)) return plan;
    const snapshot = await runCommand(
      context,
      spec.name,
      blocks(context.forceSync, spec.synchronous, args),
      {
        command: plan.command,
        cwd: plan.cwd,
        timeoutSeconds: plan.timeoutSeconds,
        network: spec.network,
        maxOutputTokens: callMaxOutputTokens(args),
        interactive: callInteractive(args),
        lane,
        cleanup: plan.cleanup ?? (() => Promise.resolve()),
      },
      call,
    );
    return { kind: 'operation', snapshot };
  });
}
