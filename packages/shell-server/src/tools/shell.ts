// sandboxed_shell: a bash script in the sandbox (pipes, redirects and && allowed).
import {
  BUILTIN_TOOLS,
  callInteractive,
  callLane,
  callMaxOutputTokens,
  META_PARAMETER_PROPERTIES,
  resolveWorkingDirectory,
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
  type ToolContext,
  type ToolEntry,
} from './tool.js';

export function shellTool(context: ToolContext, asyncGuidance: string): ToolEntry {
  const tool: Tool = {
    name: BUILTIN_TOOLS.shell,
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
    execution: RUNS_AS_TASK,
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
      if (isRefusal(cwd)) return cwd;
      const timeout = args['timeout_seconds'];
      const snapshot = await runCommand(
        context,
        tool.name,
        blocks(context.forceSync, false, args),
        {
          command: { kind: 'shell', script: String(args['command']) },
          cwd,
          timeoutSeconds: typeof timeout === 'number' ? timeout : undefined,
          maxOutputTokens: callMaxOutputTokens(args),
          interactive: callInteractive(args),
          lane: callLane(tool.name, undefined, args),
          cleanup: () => Promise.resolve(),
        },
        call,
      );
      return { kind: 'operation', snapshot };
    },
  };
}
