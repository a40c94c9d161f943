// The MCP tool of a livelog definition (SPEC §2 Compatibility): a call starts the monitor as an
// operation (status, await and cancel see it like any other) and answers at once; the issues the
// endpoint finds arrive as alerts (mcp/server.ts pushes them as notifications/message warnings).
import { livelogTask, resolveWorkingDirectory, type LoadedTool } from '@ahma/core';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { audit } from '../../calls/audit.js';
import { runOperation } from '../../calls/operation-runner.js';
import { COMMAND_OUTPUT_SCHEMA, outputSchemaWithError } from '../results.js';
import {
  RUNS_AS_TASK,
  invalidArguments,
  isRefusal,
  refusing,
  type ToolContext,
  type ToolEntry,
} from './tool.js';

const HOW_ALERTS_ARRIVE =
  'While the monitor runs, each issue the model finds arrives as a notifications/message warning (logger "ahma") naming this operation, with the summary and the output it is about. It runs until the source ends, its timeout passes or you `cancel` it; the final result counts the chunks checked and the alerts raised.';

export function livelogTool(loaded: LoadedTool, context: ToolContext): ToolEntry {
  const settings = loaded.leaf.livelog;
  if (settings === undefined) throw new Error(`${loaded.name} is not a livelog tool`);
  const tool: Tool = {
    name: loaded.name,
    description: `${loaded.description}\n\n${HOW_ALERTS_ARRIVE}`,
    inputSchema: loaded.inputSchema as Tool['inputSchema'],
    outputSchema: outputSchemaWithError(COMMAND_OUTPUT_SCHEMA),
    execution: RUNS_AS_TASK,
  };
  const argv = [settings.sourceCommand, ...settings.sourceArgs];
  return {
    tool,
    fromWords: () => ({}),
    async call(args, call) {
      const invalid = invalidArguments(context, tool, args);
      if (invalid !== undefined) return invalid;
      const { engine } = context;
      const cwd = await refusing(() =>
        resolveWorkingDirectory(
          typeof args['working_directory'] === 'string' ? args['working_directory'] : undefined,
          engine.sandbox.scope,
        ),
      );
      if (isRefusal(cwd)) return cwd;
      // A monitor runs until cancelled: only a timeout the call or the file asks for applies,
      // never the server's default command timeout.
      const timeout = args['timeout_seconds'];
      const timeoutSeconds = typeof timeout === 'number' ? timeout : loaded.leaf.timeoutSeconds;
      const task = livelogTask({
        executor: engine.executor,
        operations: engine.operations,
        settings,
        cwd,
        timeoutMs: timeoutSeconds === undefined ? undefined : timeoutSeconds * 1000,
        env: context.env,
        logger: context.logger,
      });
      // A monitor runs until cancelled: the call never blocks (not even with --sync) and answers
      // at once, without an inline wait that could only delay it.
      const snapshot = await runOperation(
        { ...context, inlineWaitMs: 0 },
        loaded.name,
        false,
        async (signal, id) => {
          const result = await task(signal, id);
          audit(
            { logger: context.logger, scope: engine.sandbox.scope },
            { operation: id, tool: loaded.name, argv, cwd, result },
          );
          return result;
        },
        call,
      );
      return { kind: 'operation', snapshot };
    },
  };
}
