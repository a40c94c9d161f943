// R2.2/R3.3: the completion of an async call that was answered `started` is pushed to the client as
// notifications/message (logger "ahma", level info, data = the finished result), not as progress:
// MCP ends a request's progress with its response, and the official SDK clients drop progress that
// comes later (the TypeScript client reports "unknown token"). The client's logging/setLevel is
// honoured (the SDK's Server filters); a result not pushed stays available from `await`/`status`.
// Clients rarely put such a message in the model's context, so the result also waits for the next
// tool result of the connection (piggyback.ts).
import type { Engine } from '@ahma/core';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Logger } from 'pino';
import type { Piggyback } from './piggyback.js';
import { commandResult, describeFinished } from '../calls/results.js';

/** The logger name of every message Ahma sends the client. */
export const LOGGER_NAME = 'ahma';

/**
 * Claude Code's research-preview channel: a server that declares it (experimental capability)
 * may send notifications/claude/channel, `{content, meta}`, which Claude Code puts in the model's
 * context when started with --dangerously-load-development-channels server:NAME.
 */
export const CLAUDE_CHANNEL = 'claude/channel';

/** Operation ids whose call was answered `started`: their completion is pushed. */
export type AnsweredStarted = Set<string>;

/**
 * Pushes the completions of `answeredStarted` on `server`, and hands them to `piggyback` for the
 * next tool result; returns the unsubscribe function.
 */
export function pushCompletions(
  server: Server,
  engine: Engine,
  answeredStarted: AnsweredStarted,
  logger: Logger,
  piggyback: Piggyback,
  claudeChannel = false,
): () => void {
  return engine.operations.onComplete((snapshot) => {
    if (!answeredStarted.delete(snapshot.id)) return;
    const result = commandResult(snapshot);
    if (result.status === 'running' || result.status === 'queued') return;
    piggyback.finished(snapshot);
    if (claudeChannel) {
      server
        .notification({
          method: `notifications/${CLAUDE_CHANNEL}`,
          params: {
            content: describeFinished(result),
            meta: {
              source: LOGGER_NAME,
              operation_id: result.operation_id,
              tool: result.tool,
              status: result.status,
            },
          },
        })
        .catch((error: unknown) =>
          logger.warn({ err: error, operation: snapshot.id }, 'could not send a channel event'),
        );
    }
    server
      .sendLoggingMessage(
        { level: 'info', logger: LOGGER_NAME, data: result },
        transportSessionId(server),
      )
      .catch((error: unknown) =>
        logger.warn({ err: error, operation: snapshot.id }, 'could not push a completion'),
      );
  });
}

/**
 * The SDK's Server keeps the level a client set with logging/setLevel under its transport's
 * session id (an HTTP session's; none over stdio), and filters a message only when it is given the
 * same id: without it an HTTP client's setLevel would be ignored.
 */
export function transportSessionId(server: Server): string | undefined {
  return server.transport?.sessionId;
}
