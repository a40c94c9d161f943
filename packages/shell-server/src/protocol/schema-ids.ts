// Output schemas as tools/list shows them: each with an `$id` made from its content (both eras).
// Why: the SDK v1 client builds a validator for every listed outputSchema at every tools/list
// (the v2 client at the first call after a listing). Both reuse one they built before only
// for a schema with an `$id` (Ajv's getSchema(id), else compile). Without ids the v1 client
// compiled every tool's schema again at each listing: 14–18 ms with the 7 default tools,
// 115–129 ms with 54 (bench/README.md, "tools/list in the client"). The id is a hash of the
// content, so equal schemas (most tools share one) share an id and one validator. Two
// different schemas never share one: a client that knows an id validates with what it
// compiled for that id, which would be the wrong schema.
import { createHash } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';

/** The ids' prefix: a URN (nothing to fetch), naming the hash. */
export const SCHEMA_ID_PREFIX = 'urn:ahma:output-schema:sha256:';

/** Each listed tool's form with the id, made once (the tool set keeps its tool objects). */
const listed = new WeakMap<Tool, Tool>();

/**
 * `tool` with its outputSchema's `$id` set to the schema's content id (the same object when it
 * has no outputSchema). An `$id` the schema already had is replaced, not kept: an id someone
 * else chose could name a different schema (or claim one of these), and a client would then
 * check results against the wrong one. Only Ahma's own schemas are listed today (a remote
 * server's is not passed on: remote/remote-server.ts), and none has an `$id` of its own.
 */
export function withSchemaId(tool: Tool): Tool {
  const schema = tool.outputSchema;
  if (schema === undefined) return tool;
  let shown = listed.get(tool);
  if (shown === undefined) {
    const content = { ...schema };
    delete content['$id'];
    shown = { ...tool, outputSchema: { $id: schemaId(content), ...content } };
    listed.set(tool, shown);
  }
  return shown;
}

/** The `$id` of a schema (given without one): a SHA-256 of its JSON with sorted keys. */
export function schemaId(schema: object): string {
  return SCHEMA_ID_PREFIX + createHash('sha256').update(canonicalJson(schema)).digest('hex');
}

/** JSON with every object's keys in sorted order, so equal content gives equal text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const members = Object.entries(value)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`);
    return `{${members.join(',')}}`;
  }
  // undefined in an array is null in JSON, as JSON.stringify writes it.
  return JSON.stringify(value) ?? 'null';
}
