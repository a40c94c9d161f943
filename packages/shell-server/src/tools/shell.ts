// sandboxed_shell: a bash script in the sandbox (pipes, redirects and && allowed). It answers at
// once with an operation id unless the command ends within the inline wait (its mode is async).
import { BUILTIN_TOOLS, META_PARAMETER_PROPERTIES, resolveWorkingDirectory } from '@ahma/core';
import { defineCommandTool } from './command-tool.js';
import type { ToolContext, ToolEntry } from './tool.js';

export function shellTool(context: ToolContext, asyncGuidance: string): ToolEntry {
  return defineCommandTool(context, {
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
    synchronous: false,
    fromWords: (words) => (words.length === 0 ? {} : { command: words.join(' ') }),
    async toCommand(args) {
      const directory = args['working_directory'];
      const timeout = args['timeout_seconds'];
      return {
        command: { kind: 'shell', script: String(args['command']) },
        cwd: await resolveWorkingDirectory(
          typeof directory === 'string' ? directory : undefined,
          context.engine.sandbox.scope,
        ),
        timeoutSeconds: typeof timeout === 'number' ? timeout : undefined,
      };
    },
  });
}
