// tools/list and tools/call, served alike in both eras (docs/decisions/0001): the 2025 server
// (server.ts, SDK v1) and the 2026-07-28 one (modern/server.ts, SDK v2) list the same tools and
// call them the same way; only what their SDKs hand a handler and the error class they answer a
// refused request with differ. Each passes those as an Era and keeps only its own part of a call
// (2025: tasks, piggybacked results, questions to the person; 2026-07-28: the tasks extension).
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Runtime } from '../runtime/runtime.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { isRefusal, refusal, type Refusal } from '../jsonrpc/refusal.js';
import type { CallContext, ToolEntry, ToolOutcome } from '../tools/tool.js';
import { progressReporter, type ProgressNotification } from './progress.js';
import { withSchemaId } from './schema-ids.js';

/** What the shared handlers need of an era's SDK. */
export interface Era {
  /** What the log adds to the method's name: '' for 2025, ' (2026-07-28)'. */
  readonly logSuffix: string;
  /** The SDK's protocol error for a refused request: its rpcCode and message go on the wire. */
  protocolError(refused: Refusal): Error;
}

/** A tools/call as either SDK hands it over. */
export interface ToolCallRequest {
  readonly name: string;
  readonly arguments: Record<string, unknown> | undefined;
  readonly progressToken: string | number | undefined;
  /** Aborted when the client cancels the request (or leaves). */
  readonly signal: AbortSignal;
  /** Sends a notification on the request's own stream. */
  notify(notification: ProgressNotification): Promise<void>;
}

/** What an era adds to a call (the shared part sets the cancellation and the progress). */
export type EraCallContext = Omit<CallContext, 'signal' | 'progress'>;

/** tools/list: every tool offered now, in list order. */
export async function listTools(runtime: Runtime, era: Era): Promise<Tool[]> {
  runtime.logger.debug(`tools/list${era.logSuffix}`);
  await runtime.remotesListed(); // a remote's first connection, briefly (SPEC §10)
  // Output schemas with content ids, so clients build each validator once (schema-ids.ts).
  return runtime.tools.map((entry) => withSchemaId(entry.tool));
}

/**
 * tools/call: the tool named, called with the request's cancellation and progress and what the
 * era adds (`contextFor`, which may refuse the call for this tool). A name no tool has is a
 * protocol error (-32602), not a tool error: there is no tool to answer one (SPEC §3).
 */
export async function callTool(
  runtime: Runtime,
  era: Era,
  request: ToolCallRequest,
  contextFor: (entry: ToolEntry) => EraCallContext | Refusal,
): Promise<ToolOutcome> {
  const { logger } = runtime;
  const { name } = request;
  logger.debug({ tool: name, arguments: request.arguments }, `tools/call${era.logSuffix}`);
  const entry = runtime.tools.find((candidate) => candidate.tool.name === name);
  if (entry === undefined) {
    throw era.protocolError(
      refusal('request', `unknown tool "${name}"`, { rpcCode: RpcCode.InvalidParams }),
    );
  }
  const context = contextFor(entry);
  if (isRefusal(context)) throw era.protocolError(context);
  return entry.call(request.arguments ?? {}, {
    ...context,
    signal: request.signal,
    // Progress of this request, sent on its own stream; only while it is open (calls/heartbeat.ts).
    progress: progressReporter(request.progressToken, (note) => request.notify(note), logger),
  });
}
