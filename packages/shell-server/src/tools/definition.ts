// The MCP tool of a loaded definition leaf: its arguments become one argv (never a shell line) that
// runs in the sandbox; a leaf with a sequence runs its steps instead (sequence.ts).
import {
  callInteractive,
  callLane,
  callMaxOutputTokens,
  prepareInvocation,
  type LoadedTool,
} from '@ahma/core';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { blocks } from '../calls/operation-runner.js';
import { runCommand } from '../calls/run-command.js';
import { COMMAND_OUTPUT_SCHEMA, outputSchemaWithError } from '../calls/results.js';
import { runSequenceTool } from './sequence.js';
import {
  RUNS_AS_TASK,
  invalidArguments,
  isRefusal,
  refusing,
  wordValue,
  type ToolContext,
  type ToolEntry,
} from './tool.js';

export function definitionTool(loaded: LoadedTool, context: ToolContext): ToolEntry {
  const tool: Tool = {
    name: loaded.name,
    description: loaded.description,
    inputSchema: loaded.inputSchema as Tool['inputSchema'],
    outputSchema: outputSchemaWithError(COMMAND_OUTPUT_SCHEMA),
    execution: RUNS_AS_TASK,
  };
  return {
    tool,
    fromWords: (words) => positionalArguments(loaded, words),
    async call(args, call) {
      const invalid = invalidArguments(context, tool, args);
      if (invalid !== undefined) return invalid;
      if (loaded.leaf.sequence !== undefined) return runSequenceTool(context, loaded, args, call);
      // Refused before anything is prepared.
      const lane = await refusing(() => callLane(loaded.name, loaded.leaf.lane, args));
      if (isRefusal(lane)) return lane;
      const prepared = await refusing(() =>
        prepareInvocation(loaded.leaf, args, {
          scope: context.engine.sandbox.scope,
          tempRoot: context.engine.state.argsDir,
        }),
      );
      if (isRefusal(prepared)) return prepared;
      const snapshot = await runCommand(
        context,
        loaded.name,
        blocks(context.forceSync, loaded.leaf.synchronous, args),
        {
          ...prepared,
          command: { kind: 'argv', argv: prepared.argv },
          network: loaded.leaf.network,
          maxOutputTokens: callMaxOutputTokens(args),
          interactive: callInteractive(args),
          lane,
        },
        call,
      );
      return { kind: 'operation', snapshot };
    },
  };
}

/** One-shot CLI: words fill the positionals in order; an array positional takes all that remain. */
function positionalArguments(
  loaded: LoadedTool,
  words: readonly string[],
): Record<string, unknown> {
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
}
