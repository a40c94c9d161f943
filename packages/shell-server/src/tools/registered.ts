// The MCP tool of a registered command (SPEC §8): it runs like every command tool, through the same
// pipeline (command-tool.ts: sandbox, warm shells, timeouts, async or sync, audit, bounded output,
// cancel). Its arguments reach the executable in their declared order, one argv element each, and
// it blocks unless it was registered `async`.
import { prepareRegisteredCall, registeredInputSchema, type RegisteredCommand } from '@ahma/core';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { defineCommandTool } from './command-tool.js';
import { wordValue, type ToolContext, type ToolEntry } from './tool.js';

export function registeredTool(
  command: RegisteredCommand,
  context: ToolContext,
  asyncGuidance: string,
): ToolEntry {
  return defineCommandTool(context, {
    name: command.name,
    description: describe(command, asyncGuidance),
    inputSchema: registeredInputSchema(command) as Tool['inputSchema'],
    synchronous: command.async !== true,
    fromWords: (words) => positionalArguments(command, words),
    async toCommand(args) {
      // The executable is looked up again at every call: it may have gone since it was registered.
      const prepared = await prepareRegisteredCall(command, args, {
        scope: context.engine.sandbox.scope,
        path: context.env['PATH'],
      });
      return {
        command: { kind: 'argv', argv: prepared.argv },
        cwd: prepared.cwd,
        timeoutSeconds: prepared.timeoutSeconds,
      };
    },
  });
}

/** Its own description (or the fallback), the command line it runs, and the async guidance if async. */
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
