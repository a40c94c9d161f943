// The MCP tool of a livelog definition (SPEC §2 Compatibility): a call starts the monitor as an
// operation (status, await and cancel see it like any other) and answers at once; the issues the
// endpoint finds arrive as alerts (protocol/server.ts pushes them as notifications/message warnings).
// A client nothing can be pushed to (2026-07-28 without the tasks extension, SPEC §12) gets no
// alert: its call still answers at once (a monitor may never end, so a call kept open until it
// does would never answer), and the answer says where the result is and that alerts are not.
import {
  callMaxOutputTokens,
  livelogTask,
  resolveLivelogStart,
  resolveWorkingDirectory,
  type LoadedTool,
  type OperationSnapshot,
} from '@ahma/core';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { audit } from '../calls/audit.js';
import { runOperation } from '../calls/operation-runner.js';
import { operationTool } from './command-tool.js';
import { isRefusal, refusing, type ToolContext, type ToolEntry } from './tool.js';

export const HOW_ALERTS_ARRIVE =
  'While the monitor runs, each issue the model finds arrives as a notifications/message warning (logger "ahma") naming this operation, with the summary and the output it is about. It runs until the source ends, its timeout passes or you `cancel` it; the final result counts the chunks checked and the alerts raised.';

/** HOW_ALERTS_ARRIVE for 2026-07-28 clients (protocol/modern/descriptions.ts): that era has no pushes. */
export const NO_ALERTS_WITHOUT_PUSHES =
  'The call answers at once with the operation_id (a task, when your client supports tasks). This protocol revision (MCP 2026-07-28) has no server pushes, so the issues the model finds cannot reach you while the monitor runs: it runs until the source ends, its timeout passes (`timeout_seconds`) or you `cancel` it, and its final result (`await`, `status`) counts the chunks checked and the issues found. Cancel a monitor you no longer need.';

export function livelogTool(loaded: LoadedTool, context: ToolContext): ToolEntry {
  const settings = loaded.leaf.livelog;
  if (settings === undefined) throw new Error(`${loaded.name} is not a livelog tool`);
  return operationTool(
    context,
    {
      name: loaded.name,
      description: `${loaded.description}\n\n${HOW_ALERTS_ARRIVE}`,
      inputSchema: loaded.inputSchema as Tool['inputSchema'],
      fromWords: () => ({}),
    },
    async (args, call) => {
      const { engine } = context;
      const cwd = await refusing(() =>
        resolveWorkingDirectory(
          typeof args['working_directory'] === 'string' ? args['working_directory'] : undefined,
          engine.sandbox.scope,
        ),
      );
      if (isRefusal(cwd)) return cwd;
      // The call's parameters in source_args and env, and the endpoint's variables: a problem
      // refuses the call before anything runs (upstream's resolve_runtime).
      const start = await refusing(() => resolveLivelogStart(settings, args, context.env));
      if (isRefusal(start)) return start;
      const auditLog = { logger: context.logger, scope: engine.sandbox.scope };
      // A monitor runs until cancelled: only a timeout the call or the file asks for applies,
      // never the server's default command timeout.
      const timeout = args['timeout_seconds'];
      const timeoutSeconds = typeof timeout === 'number' ? timeout : loaded.leaf.timeoutSeconds;
      const task = livelogTask({
        executor: engine.executor,
        operations: engine.operations,
        settings,
        start,
        cwd,
        timeoutMs: timeoutSeconds === undefined ? undefined : timeoutSeconds * 1000,
        maxOutputTokens: callMaxOutputTokens(args),
        env: context.env,
        logger: context.logger,
        onClear: (argv, result, operation) =>
          audit(auditLog, { operation, tool: loaded.name, argv, cwd, result }),
        // Like any command of the file: its network mode, and who calls for the egress proxy.
        network: loaded.leaf.network,
        caller: { tool: loaded.name, owner: call.owner },
      });
      // A monitor runs until cancelled: the call never blocks (not even with --sync) and answers
      // at once, without an inline wait that could only delay it, even for a client that would
      // have a call kept open until its command ends (keepOpen).
      const snapshot = await runOperation(
        { ...context, inlineWaitMs: 0 },
        loaded.name,
        false,
        async (signal, id) => {
          const result = await task(signal, id);
          audit(auditLog, { operation: id, tool: loaded.name, argv: start.argv, cwd, result });
          return result;
        },
        { ...call, keepOpen: false },
      );
      if (call.keepOpen === true && snapshot.status === 'running') {
        return { kind: 'answer', result: startedWithoutPushes(snapshot) };
      }
      return { kind: 'operation', snapshot };
    },
  );
}

/**
 * The answer of a monitor started for a client nothing can be pushed to: its id (status, await and
 * cancel reach it), and, in place of the push the `started` answer promises, that its alerts
 * cannot reach this client.
 */
function startedWithoutPushes(snapshot: OperationSnapshot): CallToolResult {
  const id = snapshot.id;
  const text =
    `Started ${snapshot.tool} as operation ${id}; the monitor is running. ` +
    `This client's protocol (MCP 2026-07-28, without the tasks extension) has no server pushes, so the issues the model finds cannot reach you while it runs. ` +
    `It runs until the source ends, its timeout passes or you \`cancel\` it (id "${id}"); its final result counts the chunks checked and the issues found (\`await\` with ids ["${id}"] waits for it, \`status\` checks). Cancel it once you no longer need it.`;
  return {
    content: [{ type: 'text', text }],
    structuredContent: { operation_id: id, status: 'started', tool: snapshot.tool },
  };
}
