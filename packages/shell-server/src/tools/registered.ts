// The MCP tool of a registered command (SPEC §8): run like every command tool, through the same
// engine (sandbox, warm shells, timeouts, async or sync, audit, bounded output, cancel). Its
// arguments reach the executable in their declared order, one argv element each.
import {
  callInteractive,
  callLane,
  callMaxOutputTokens,
  prepareRegisteredCall,
  registeredInputSchema,
  type RegisteredCommand,
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
  wordValue,
  type ToolContext,
  type ToolEntry,
} from './tool.js';

export function registeredTool(
  command: RegisteredCommand,
  context: ToolContext,
  asyncGuidance: string,
): ToolEntry {
  const tool: Tool = {
    name: command.name,
    description: describe(command, asyncGuidance),
    inputSchema: registeredInputSchema(command) as Tool['inputSchema'],
    outputSchema: outputSchemaWithError(COMMAND_OUTPUT_SCHEMA),
    execution: RUNS_AS_TASK,
  };
  return {
    tool,
    fromWords: (words) => positionalArguments(command, words),
    async call(args, call) {
      const invalid = invalidArguments(context, tool, args);
      if (invalid !== undefined) return invalid;
      const prepared = await refusing(() =>
        prepareRegisteredCall(command, args, {
          scope: context.engine.sandbox.scope,
          path: context.env['PATH'],
        }),
      );
      if (isRefusal(prepared)) return prepared;
      const snapshot = await runCommand(
        context,
        command.name,
        blocks(context.forceSync, command.async !== true, args),
        {
          command: { kind: 'argv', argv: prepared.argv },
          cwd: prepared.cwd,
          timeoutSeconds: prepared.timeoutSeconds,
          maxOutputTokens: callMaxOutputTokens(args),
          interactive: callInteractive(args),
          lane: callLane(command.name, undefined, args),
          cleanup: () => Promise.resolve(),
        },
        call,
      );
      return { kind: 'operation', snapshot };
    },
  };
}

function describe(command: RegisteredCommand, asyncGuidance: string): string {
  const names = Object.entries(command.args ?? {}).map(([name, argument]) =>
    argument.flag === undefined ? name : `${argument.flag} ${name}`,
  );
  const line = [command.exec, ...names].join(' ');
  const parts = [
    command.description ?? fallbackDescription(command),
    `Registered command: ${line}`,
  ];
  if (command.async === true && asyncGuidance !== '') parts.push(asyncGuidance);
  return parts.join('\n\n');
}

/** What a command registered without a description says about itself (instant-mcp allows none). */
export function fallbackDescription(command: RegisteredCommand): string {
  return `Runs ${command.exec}.`;
}

/** One-shot CLI: words fill the arguments without a flag, in their order. */
function positionalArguments(
  command: RegisteredCommand,
  words: readonly string[],
): Record<string, unknown> {
  const positionals = Object.entries(command.args ?? {}).filter(([, a]) => a.flag === undefined);
  const args: Record<string, unknown> = {};
  for (const [index, word] of words.entries()) {
    const [name, argument] = positionals[index] ?? [];
    if (name === undefined || argument === undefined) break;
    args[name] = wordValue(word, argument.type);
  }
  return args;
}
