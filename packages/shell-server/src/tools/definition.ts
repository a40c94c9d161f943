// The MCP tool of a loaded definition leaf: its arguments become one argv (never a shell line) that
// runs in the sandbox, in the lane and with the network its file declares; a leaf with a sequence
// runs its steps instead, one operation for them all (sequence.ts).
import { prepareInvocation, type LoadedTool } from '@ahma/core';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { defineCommandTool, operationTool, type OperationToolSpec } from './command-tool.js';
import { runSequenceTool } from './sequence.js';
import { wordValue, type ToolContext, type ToolEntry } from './tool.js';

export function definitionTool(loaded: LoadedTool, context: ToolContext): ToolEntry {
  const { leaf } = loaded;
  const spec: OperationToolSpec = {
    name: loaded.name,
    description: loaded.description,
    inputSchema: loaded.inputSchema as Tool['inputSchema'],
    fromWords: (words) => positionalArguments(loaded, words),
  };
  if (leaf.sequence !== undefined) {
    return operationTool(context, spec, (args, call) =>
      runSequenceTool(context, loaded, args, call),
    );
  }
  return defineCommandTool(context, {
    ...spec,
    synchronous: leaf.synchronous,
    lane: leaf.lane,
    network: leaf.network,
    async toCommand(args) {
      // File arguments go to the server's private directory, which no command can write.
      const prepared = await prepareInvocation(leaf, args, {
        scope: context.engine.sandbox.scope,
        tempRoot: context.engine.state.argsDir,
      });
      return {
        command: { kind: 'argv', argv: prepared.argv },
        cwd: prepared.cwd,
        timeoutSeconds: prepared.timeoutSeconds,
        cleanup: () => prepared.cleanup(),
      };
    },
  });
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
