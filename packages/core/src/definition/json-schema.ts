// JSON Schema (draft 2020-12) generated from the zod source in schema.ts: what editors read via
// "$schema" and what the validator compiles. Never edit docs/mtdf-schema.json by hand.
import * as z from 'zod';
import { toolDefinitionSchema, toolGuidanceSchema } from './schema.js';

export type JsonSchema = Record<string, unknown>;

/** The MTDF JSON Schema, as published in docs/mtdf-schema.json. */
export function mtdfJsonSchema(): JsonSchema {
  return z.toJSONSchema(toolDefinitionSchema, { target: 'draft-2020-12', io: 'input' });
}

/** The JSON Schema of tool_guidance.json. */
export function toolGuidanceJsonSchema(): JsonSchema {
  return z.toJSONSchema(toolGuidanceSchema, { target: 'draft-2020-12', io: 'input' });
}

/** Serialises a schema the way the committed copies are written (stable, newline-terminated). */
export function renderJsonSchema(schema: JsonSchema): string {
  return `${JSON.stringify(schema, null, 2)}\n`;
}
