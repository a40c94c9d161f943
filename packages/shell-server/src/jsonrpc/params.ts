// Protocol params checked before the SDK sees a request (SPEC §6). The SDK parses a request with
// its method's zod schema inside the handler wrapper and, on failure, answers -32603 Internal
// error with the raw zod dump; a wrong-typed field is the client's mistake: -32602 Invalid params
// with one line naming the field. (A tool's own arguments are checked by the tool and answered
// as tool errors, SPEC §2: this only covers the protocol's params.)
import {
  CallToolRequestSchema,
  CancelTaskRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  InitializeRequestSchema,
  ListTasksRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  SetLevelRequestSchema,
  type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { describeIssue, type SchemaIssue } from './issues.js';

interface RequestSchema {
  safeParse(
    value: unknown,
  ):
    | { readonly success: true }
    | { readonly success: false; readonly error: { readonly issues: readonly SchemaIssue[] } };
}

/**
 * The requests this server answers: the SDK's own initialize, ping and logging/setLevel (with the
 * logging capability), the tasks/* the SDK serves from the task store (tasks/get, tasks/list,
 * tasks/cancel; the 2026-07-28 era's tasks/get and tasks/cancel take the same taskId), and the
 * handlers of createMcpServer (server.ts). A handler added there belongs here too; a method
 * missing here keeps the SDK's behaviour. Methods the server does not serve stay -32601 Method
 * not found. Every transport runs this check (incoming.ts).
 */
const SERVED: ReadonlyMap<string, RequestSchema> = new Map<string, RequestSchema>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
  ['logging/setLevel', SetLevelRequestSchema],
  ['tasks/get', GetTaskRequestSchema],
  ['tasks/result', GetTaskPayloadRequestSchema],
  ['tasks/list', ListTasksRequestSchema],
  ['tasks/cancel', CancelTaskRequestSchema],
]);

/**
 * Of those, the ones the 2026-07-28 era still has. Its requests carry the protocol version in their
 * `_meta` envelope; the methods it removed (initialize, logging/setLevel, tasks/result,
 * tasks/list) are answered there -32601 Method not found whatever their params (SEP-2575).
 */
const SERVED_2026 = new Set(['tools/list', 'tools/call', 'tasks/get', 'tasks/cancel']);

/** The `_meta` key holding a 2026-07-28 request's protocol version. */
const ENVELOPE_VERSION = 'io.modelcontextprotocol/protocolVersion';

/** One line saying what is wrong with a served request's params, e.g. `tools/call: "name" is required`. */
export function paramsProblem(request: JSONRPCRequest): string | undefined {
  const schema = SERVED.get(request.method);
  if (schema === undefined) return undefined;
  if (isModern(request) && !SERVED_2026.has(request.method)) return undefined;
  const parsed = schema.safeParse(request);
  if (parsed.success) return undefined;
  const [issue] = parsed.error.issues;
  return `${request.method}: ${issue === undefined ? 'invalid params' : describeIssue(issue, request)}`;
}

/** Whether a request carries the 2026-07-28 era's `_meta` envelope. */
function isModern(request: JSONRPCRequest): boolean {
  const meta: unknown = request.params?.['_meta'];
  return typeof meta === 'object' && meta !== null && ENVELOPE_VERSION in meta;
}
