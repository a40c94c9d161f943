// What every tool is: its MCP descriptor, a handler that answers with an outcome, and the one-shot
// CLI's reading of raw words. The outcome is not yet an MCP result: the MCP server renders it
// (toCallToolResult), and the one-shot CLI reads a command's result straight from its operation.
import {
  type ArgumentValidator,
  type Engine,
  type LoadedTool,
  type OperationSnapshot,
  type Environment,
} from '@ahma/core';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { CallContext, RunnerSettings } from '../calls/operation-runner.js';
import { finishedResult, toolError } from '../calls/results.js';
import { refused, type Refusal } from '../jsonrpc/refusal.js';

export type { CallContext };

/**
 * SPEC §12, 2025-11-25 tasks: a tool that runs an operation may be called as a task; one that
 * answers at once (status, await, cancel, the registry's) may not.
 */
export const RUNS_AS_TASK = { taskSupport: 'optional' } as const satisfies Tool['execution'];
export const NEVER_A_TASK = { taskSupport: 'forbidden' } as const satisfies Tool['execution'];

// A refused call (nothing ran) is the server's one refusal shape (jsonrpc/refusal.ts), `what: 'call'`.
export { isRefusal, refused, refusing, type Refusal } from '../jsonrpc/refusal.js';

export type ToolOutcome =
  /** A command or sequence: finished, or still running (the call answers `started`). */
  | { readonly kind: 'operation'; readonly snapshot: OperationSnapshot }
  | Refusal
  /** A built-in's own answer (status, await, cancel, activate_tools). */
  | { readonly kind: 'answer'; readonly result: CallToolResult };

export interface ToolEntry {
  readonly tool: Tool;
  call(args: Record<string, unknown>, call: CallContext): Promise<ToolOutcome>;
  /** One-shot CLI (R9): the arguments that raw words after `--` stand for. */
  fromWords(words: readonly string[]): Record<string, unknown>;
}

/** What every tool handler can use. */
export interface ToolContext extends RunnerSettings {
  readonly engine: Engine;
  /** The definition tools by name, for the steps of sequences (the current set, after reloads). */
  readonly definitionTools: () => ReadonlyMap<string, LoadedTool>;
  readonly validator: ArgumentValidator;
  readonly logger: Logger;
  /** The server's environment (a livelog tool's API key is read from it). */
  readonly env: Environment;
  /** Default command timeout, seconds (--timeout). */
  readonly defaultTimeoutSeconds: number;
  /** --sync: every call blocks (R3.4). */
  readonly forceSync: boolean;
}

/** A ToolContext without the current definition tools, which the tool set adds. */
export type ToolContextBase = Omit<ToolContext, 'definitionTools'>;

/** The refusal of arguments that do not match the tool's input schema; undefined when they do. */
export function invalidArguments(
  context: Pick<ToolContext, 'validator' | 'logger'>,
  tool: Tool,
  args: unknown,
): Refusal | undefined {
  let errors;
  try {
    errors = context.validator.validate(tool.inputSchema, args);
  } catch (error) {
    // Unreachable for a loaded file (its schemas are compiled when it loads), but a call must
    // never become a protocol error (SPEC §2).
    context.logger.error({ tool: tool.name, err: error }, 'input schema cannot be compiled');
    return refused(
      `${tool.name} cannot check its arguments: ${String(error)}`,
      'ARGUMENTS_INVALID',
    );
  }
  if (errors.length === 0) return undefined;
  return refused(
    `Invalid arguments for ${tool.name}:\n${errors.map((e) => `- ${e.message}`).join('\n')}`,
    'ARGUMENTS_INVALID',
  );
}

/** An outcome as the MCP result of tools/call. */
export function toCallToolResult(outcome: ToolOutcome): CallToolResult {
  switch (outcome.kind) {
    case 'operation':
      return finishedResult(outcome.snapshot); // a running one answers `started`
    case 'refused':
      return toolError(outcome.message, outcome.code);
    case 'answer':
      return outcome.result;
  }
}

/**
 * A raw word as the value of a parameter of `type`: the word itself for a string, else its JSON
 * value ("3", "true"); a word that is not JSON stays a string, so the argument check names the
 * parameter and its type instead of the parse failing.
 */
export function wordValue(word: string, type: string | undefined): unknown {
  if (type === undefined || type === 'string') return word;
  try {
    return JSON.parse(word) as unknown;
  } catch {
    return word;
  }
}
