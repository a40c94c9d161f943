// How results look to the client (SPEC §3): text for the model, structuredContent for programs,
// and one shape for success and failure (a failed command is a tool result with isError, never a
// JSON-RPC error).
import { AHMA_ERROR_CODES, type AhmaErrorCode } from '@ahma/core';
import type { LanePlace, OperationSnapshot, StepRecord } from '@ahma/core';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';

/** The structured result of a finished command. */
export interface CommandResult {
  readonly operation_id: string;
  readonly tool: string;
  readonly status: 'completed' | 'failed' | 'timed_out' | 'cancelled';
  readonly exit_code: number | null;
  readonly output: string;
  readonly truncated: boolean;
  readonly full_output_path?: string;
  readonly duration_ms: number;
  /** A sequence's steps in order (their outputs are in `output`, the transcript). */
  readonly steps?: readonly StepSummary[];
}

export interface StepSummary {
  readonly step: number;
  readonly label: string;
  readonly argv: readonly string[];
  readonly status: StepRecord['status'];
  readonly exit_code: number | null;
  readonly started_at: string | null;
  readonly finished_at: string | null;
  readonly duration_ms: number;
  /** The step's whole output, when it outgrew what the transcript keeps of it. */
  readonly full_output_path?: string;
}

/** outputSchema of every command tool: the async start or the finished result. */
export const COMMAND_OUTPUT_SCHEMA = {
  type: 'object',
  properties: {
    operation_id: { type: 'string' },
    tool: { type: 'string' },
    status: {
      type: 'string',
      enum: ['started', 'queued', 'running', 'completed', 'failed', 'timed_out', 'cancelled'],
    },
    queued_behind: { type: 'string' },
    queue_position: { type: 'integer' },
    workspace: { type: 'string' },
    exit_code: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
    output: { type: 'string' },
    truncated: { type: 'boolean' },
    full_output_path: { type: 'string' },
    duration_ms: { type: 'number' },
    steps: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          step: { type: 'integer' },
          label: { type: 'string' },
          argv: { type: 'array', items: { type: 'string' } },
          status: {
            type: 'string',
            enum: ['completed', 'failed', 'timed_out', 'cancelled', 'refused', 'not_run'],
          },
          exit_code: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
          started_at: { anyOf: [{ type: 'string' }, { type: 'null' }] },
          finished_at: { anyOf: [{ type: 'string' }, { type: 'null' }] },
          duration_ms: { type: 'number' },
          full_output_path: { type: 'string' },
        },
        required: ['step', 'label', 'status'],
      },
    },
  },
  required: ['operation_id', 'tool', 'status'],
} as const;

/** outputSchema of `status` and `await`. */
export const OPERATIONS_OUTPUT_SCHEMA = {
  type: 'object',
  properties: { operations: { type: 'array', items: COMMAND_OUTPUT_SCHEMA } },
  required: ['operations'],
} as const;

/** A snapshot as the structured result: the finished fields once it has finished. */
export function commandResult(
  snapshot: OperationSnapshot,
): CommandResult | RunningResult | QueuedResult {
  const result = snapshot.result;
  if (result === undefined && snapshot.queued !== undefined) {
    return { operation_id: snapshot.id, tool: snapshot.tool, ...queuedFields(snapshot.queued) };
  }
  if (result === undefined)
    return { operation_id: snapshot.id, tool: snapshot.tool, status: 'running' };
  return {
    operation_id: snapshot.id,
    tool: snapshot.tool,
    status: result.status,
    exit_code: result.exitCode,
    output: result.output,
    truncated: result.truncated,
    ...(result.fullOutputPath === undefined ? {} : { full_output_path: result.fullOutputPath }),
    duration_ms: Math.round(result.durationMs),
    ...(result.steps === undefined ? {} : { steps: result.steps.map(stepSummary) }),
  };
}

function stepSummary(record: StepRecord): StepSummary {
  return {
    step: record.step,
    label: record.label,
    argv: record.argv,
    status: record.status,
    exit_code: record.exitCode,
    started_at: record.startedAt ?? null,
    finished_at: record.finishedAt ?? null,
    duration_ms: Math.round(record.durationMs),
    ...(record.fullOutputPath === undefined ? {} : { full_output_path: record.fullOutputPath }),
  };
}

/** One line that says how it ended, then the output. */
export function describeFinished(result: CommandResult): string {
  const how =
    result.status === 'completed' || result.status === 'failed'
      ? `exit code ${String(result.exit_code)}`
      : result.status === 'timed_out'
        ? 'timed out; its processes were killed'
        : 'cancelled; its processes were killed';
  const header = `${result.operation_id} ${result.status} (${how}, ${String(result.duration_ms)} ms)`;
  return result.output === '' ? `${header}\n(no output)` : `${header}\n${result.output}`;
}

export function finishedResult(snapshot: OperationSnapshot): CallToolResult {
  const result = commandResult(snapshot);
  if (result.status === 'running' || result.status === 'queued') return startedResult(snapshot);
  return {
    content: [{ type: 'text', text: describeFinished(result) }],
    structuredContent: { ...result },
    isError: !(result.status === 'completed' && result.exit_code === 0),
  };
}

/** The answer of an async call still running: its id, and how its result will arrive (R2.2, R2.7). */
export function startedResult(snapshot: OperationSnapshot): CallToolResult {
  const { queued } = snapshot;
  if (queued !== undefined) {
    const text =
      `${snapshot.tool} is queued as operation ${snapshot.id}: another call is writing its workspace ${queued.workspace}, so it waits behind ${queued.behind} (${ordinal(queued.position)} in line) and starts when the workspace is free. ` +
      `Sending the same call again does not run it twice. Its result is put before the result of your next tool call once it has run; \`status\` shows the line, \`await\` with ids ["${snapshot.id}"] waits for it, \`cancel\` takes it out.`;
    return {
      content: [{ type: 'text', text }],
      structuredContent: {
        operation_id: snapshot.id,
        tool: snapshot.tool,
        ...queuedFields(queued),
      },
    };
  }
  const text =
    `Started ${snapshot.tool} as operation ${snapshot.id}; it is still running. ` +
    `Once it finishes, its result is put before the result of your next tool call (any tool), once; continue with other work meanwhile. ` +
    `If you cannot continue without the result, call \`await\` with ids ["${snapshot.id}"] (\`status\` checks without waiting).`;
  return {
    content: [{ type: 'text', text }],
    structuredContent: { operation_id: snapshot.id, status: 'started', tool: snapshot.tool },
  };
}

interface RunningResult {
  readonly operation_id: string;
  readonly tool: string;
  readonly status: 'running';
}

/** An exclusive call waiting for its workspace (docs/tool-definitions.md, "Workspace lanes"). */
export interface QueuedResult {
  readonly operation_id: string;
  readonly tool: string;
  readonly status: 'queued';
  readonly queued_behind: string;
  readonly queue_position: number;
  readonly workspace: string;
}

function queuedFields(place: LanePlace) {
  return {
    status: 'queued' as const,
    queued_behind: place.behind,
    queue_position: place.position,
    workspace: place.workspace,
  };
}

const ordinal = (n: number) =>
  `${String(n)}${n % 10 === 1 && n % 100 !== 11 ? 'st' : n % 10 === 2 && n % 100 !== 12 ? 'nd' : n % 10 === 3 && n % 100 !== 13 ? 'rd' : 'th'}`;

/** The structured part of a refused call: the error's stable code and its message. */
export interface ToolErrorContent {
  readonly error: { readonly code: AhmaErrorCode; readonly message: string };
}

const ERROR_SCHEMA = {
  type: 'object',
  description: 'Why the call was refused: a stable code (docs/requirements.md) and the message.',
  properties: {
    code: { type: 'string', enum: [...AHMA_ERROR_CODES] },
    message: { type: 'string' },
  },
  required: ['code', 'message'],
} as const;

/**
 * A tool's outputSchema: its result object, or `{error: {code, message}}` for a refused call.
 * The SDK client validates structuredContent against outputSchema even when isError is set, so
 * the error shape must be declared beside the result.
 */
export function outputSchemaWithError(schema: {
  readonly type: 'object';
  readonly properties: Readonly<Record<string, unknown>>;
  readonly required: readonly string[];
}): Tool['outputSchema'] {
  const { required, ...rest } = schema;
  return {
    ...rest,
    properties: { ...schema.properties, error: ERROR_SCHEMA },
    anyOf: [{ required: [...required] }, { required: ['error'] }],
  } as unknown as Tool['outputSchema'];
}

/**
 * A refused call. With a code, the agent gets it twice: as `[CODE] message` in the text and as
 * `structuredContent.error` for programs. Without one (a refusal no AhmaError describes) only
 * the text.
 */
export function toolError(message: string, code?: AhmaErrorCode): CallToolResult {
  if (code === undefined) return { content: [{ type: 'text', text: message }], isError: true };
  const structured: ToolErrorContent = { error: { code, message } };
  return {
    content: [{ type: 'text', text: `[${code}] ${message}` }],
    structuredContent: { ...structured },
    isError: true,
  };
}
