// The MCP face of Ahma: the SDK's low-level Server with raw JSON Schema tools (R5.3), tools/list,
// tools/call, progress while a call is open, and completion pushes as notifications/message
// (R2.2). Every SDK call of the server lives under this folder.
import type { Engine } from '@ahma/core';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { pushCompletions, type AnsweredStarted } from './completion-push.js';
import type { ProgressReporter } from './heartbeat.js';
import type { ToolEntry } from './tools.js';

export interface McpServerParts {
  readonly name: string;
  readonly version: string;
  readonly engine: Engine;
  readonly logger: Logger;
  /** Tools in list order; looked up by name on every call. */
  readonly tools: () => readonly ToolEntry[];
  /** Async calls answered `started`, whose completion is pushed (filled by the tools). */
  readonly answeredStarted: AnsweredStarted;
  /** The initialize result's instructions (mcp/instructions.ts). */
  readonly instructions: string;
}

export function createMcpServer(parts: McpServerParts): Server {
  const server = new Server(
    { name: parts.name, version: parts.version },
    {
      // logging: completions of answered calls and livelog alerts are notifications/message.
      capabilities: { tools: { listChanged: true }, logging: {} },
      instructions: parts.instructions,
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => {
    parts.logger.debug('tools/list');
    return {
      tools: parts.tools().map((entry) => entry.tool),
    };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    parts.logger.debug(
      { tool: request.params.name, arguments: request.params.arguments },
      'tools/call',
    );
    const entry = parts.tools().find((candidate) => candidate.tool.name === request.params.name);
    if (entry === undefined) {
      throw new McpError(ErrorCode.InvalidParams, `unknown tool "${request.params.name}"`);
    }
    const progressToken = request.params._meta?.progressToken;
    // Progress of this request, sent on its own stream; only while it is open (see heartbeat.ts).
    const progress: ProgressReporter | undefined =
      progressToken === undefined
        ? undefined
        : (value, message) =>
            extra
              .sendNotification({
                method: 'notifications/progress',
                params: { progressToken, progress: value, message },
              })
              .catch((error: unknown) =>
                parts.logger.warn({ err: error }, 'could not send progress'),
              );
    return entry.call(request.params.arguments ?? {}, { signal: extra.signal, progress });
  });

  pushCompletions(server, parts.engine, parts.answeredStarted, parts.logger);

  // SPEC §3: a livelog tool's alert is pushed at once as a warning naming its operation.
  parts.engine.operations.onAlert((alert) => {
    server
      .sendLoggingMessage({
        level: 'warning',
        logger: 'ahma',
        data: {
          operation_id: alert.operationId,
          tool: alert.tool,
          alert: alert.summary,
          chunk: alert.detail,
        },
      })
      .catch((error: unknown) =>
        parts.logger.warn({ err: error, operation: alert.operationId }, 'could not push an alert'),
      );
  });

  return server;
}

/** notifications/tools/list_changed, after a reload swapped the tools (a no-op before connect). */
export async function notifyToolsChanged(server: Server, logger: Logger): Promise<void> {
  if (server.transport === undefined) return;
  await server
    .sendToolListChanged()
    .catch((error: unknown) => logger.warn({ err: error }, 'could not send tools/list_changed'));
}
