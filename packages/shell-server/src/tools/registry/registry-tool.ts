// What one of the command registry's management tools is: a small record — name, description,
// input schema, the fields of its answer, and a handler — made into a tool here. Each answers at
// once (never as a task), its arguments are checked against its input schema before its handler
// runs, and its answer is text plus every field of `result` as structuredContent, or a refusal.
import type { ArgumentValidator, Registry, RegistryDraft } from '@ahma/core';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { outputSchemaWithError } from '../../calls/results.js';
import {
  NEVER_A_TASK,
  invalidArguments,
  refusing,
  type Refusal,
  type ToolEntry,
  type ToolOutcome,
} from '../tool.js';

export interface RegistryToolsContext {
  readonly registry: Registry;
  /** The sandbox scope: relative paths of import_config and export_config start there. */
  readonly scope: string;
  /** Why a registered command is not offered as a tool (its name is another tool's), if it is not. */
  readonly shadowedBy: (name: string) => string | undefined;
  readonly validator: ArgumentValidator;
  readonly logger: Logger;
}

export interface RegistryTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  /** The answer's structuredContent: each field and its JSON type (all of them always there). */
  readonly result: Readonly<Record<string, string>>;
  /** Called with arguments that match the input schema. */
  call(
    args: Record<string, unknown>,
    context: RegistryToolsContext,
  ): Promise<ToolOutcome> | ToolOutcome;
}

export function registryEntry(context: RegistryToolsContext, spec: RegistryTool): ToolEntry {
  const tool: Tool = {
    name: spec.name,
    description: spec.description,
    inputSchema: spec.inputSchema as Tool['inputSchema'],
    // Like every tool's: the answer, or a refusal's {error: {code, message}} (SPEC §3).
    outputSchema: outputSchemaWithError({
      type: 'object',
      properties: Object.fromEntries(
        Object.entries(spec.result).map(([field, type]) => [field, { type }]),
      ),
      required: Object.keys(spec.result),
    }),
    execution: NEVER_A_TASK,
  };
  return {
    tool,
    fromWords: () => ({}),
    async call(args) {
      return invalidArguments(context, tool, args) ?? spec.call(args, context);
    },
  };
}

/**
 * A change to the registry: on disk before the call answers, and the tool list changes with it; an
 * expected failure (a name taken, a command unknown) refuses the call and changes nothing.
 */
export function change<T>(
  context: RegistryToolsContext,
  work: (draft: RegistryDraft) => Promise<T>,
): Promise<T | Refusal> {
  return refusing(() => context.registry.change(work));
}

/** An input schema of these properties and nothing else. */
export function objectSchema(
  properties: Record<string, unknown>,
  required: readonly string[],
): Record<string, unknown> {
  return {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

/** A management tool's answer: the text for the model, and the same as structuredContent. */
export function answer(text: string, structured?: object, isError = false): ToolOutcome {
  const result: CallToolResult = {
    content: [{ type: 'text', text }],
    ...(structured === undefined ? {} : { structuredContent: { ...structured } }),
    ...(isError ? { isError } : {}),
  };
  return { kind: 'answer', result };
}
