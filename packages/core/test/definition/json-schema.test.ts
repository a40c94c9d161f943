// R5.1: the MTDF JSON Schema is generated from the zod source and is what the validator compiles.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import {
  mtdfJsonSchema,
  renderJsonSchema,
  toolGuidanceJsonSchema,
  type JsonSchema,
} from '../../src/definition/json-schema.js';

/** Every sub-schema that declares properties (i.e. every object definition), with its location. */
function objectSchemas(schema: unknown, at = '#'): [string, JsonSchema][] {
  if (typeof schema !== 'object' || schema === null) return [];
  if (Array.isArray(schema))
    return schema.flatMap((item, index) => objectSchemas(item, `${at}/${index}`));
  const node = schema as JsonSchema;
  const own: [string, JsonSchema][] = 'properties' in node ? [[at, node]] : [];
  return [
    ...own,
    ...Object.entries(node).flatMap(([key, value]) => objectSchemas(value, `${at}/${key}`)),
  ];
}

describe('generated JSON Schema', () => {
  it.each([
    ['MTDF', mtdfJsonSchema],
    ['tool guidance', toolGuidanceJsonSchema],
  ])('R5.1: the %s schema is draft 2020-12', (_name, generate) => {
    expect(generate()['$schema']).toBe('https://json-schema.org/draft/2020-12/schema');
  });

  // The validator compiles without meta-schema validation (start-up time); this is that check.
  it.each([
    ['MTDF', mtdfJsonSchema],
    ['tool guidance', toolGuidanceJsonSchema],
  ])('R5.1: the %s schema is valid against the draft 2020-12 meta-schema', (_name, generate) => {
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true });
    expect(ajv.validateSchema(generate())).toBe(true);
    expect(ajv.errors ?? null).toBeNull();
  });

  it("R5.1, SPEC §2 compat: only a tool's top level and its livelog block are open (as upstream's); every other object has additionalProperties: false (unknown keys are errors)", () => {
    const open = (generate: () => JsonSchema) =>
      objectSchemas(generate())
        .filter(([, node]) => node['additionalProperties'] !== false)
        .map(([at]) => at);
    expect(open(mtdfJsonSchema)).toEqual(['#', '#/$defs/Livelog']);
    expect(mtdfJsonSchema()['additionalProperties']).toBe(true);
    expect(open(toolGuidanceJsonSchema)).toEqual([]);
  });

  it('R5.1: the object definitions checked are the tool, its parts and the guidance file', () => {
    expect(objectSchemas(mtdfJsonSchema()).map(([at]) => at)).toEqual([
      '#',
      '#/$defs/Hints',
      '#/$defs/AvailabilityCheck',
      '#/$defs/Subcommand',
      '#/$defs/Argument',
      '#/$defs/Items',
      '#/$defs/SequenceStep',
      '#/$defs/Livelog',
      '#/$defs/LivelogParameter',
      '#/$defs/LlmProvider',
    ]);
    expect(objectSchemas(toolGuidanceJsonSchema()).map(([at]) => at)).toEqual(['#']);
  });

  it('R5.1: the definitions referenced by the MTDF schema are all present', () => {
    const schema = mtdfJsonSchema();
    const defs = schema['$defs'] as Record<string, unknown>;
    expect(Object.keys(defs).sort()).toEqual([
      'Argument',
      'AvailabilityCheck',
      'Hints',
      'Items',
      'Livelog',
      'LivelogParameter',
      'LlmProvider',
      'SequenceStep',
      'Subcommand',
    ]);
    const refs = JSON.stringify(schema).match(/"\$ref":"#\/\$defs\/[^"]+"/g) ?? [];
    for (const ref of refs) expect(defs).toHaveProperty(ref.slice('"$ref":"#/$defs/'.length, -1));
  });

  it('R5.3, SPEC §2 compat: the schema states types, required keys, enum and format (any string; "path" is the one with an effect)', () => {
    const schema = mtdfJsonSchema();
    expect(schema['required']).toEqual(['name', 'description', 'command']);
    const argument = (schema['$defs'] as Record<string, JsonSchema>)['Argument'] ?? {};
    const properties = argument['properties'] as Record<string, JsonSchema>;
    expect(properties['type']?.['enum']).toEqual([
      'string',
      'boolean',
      'integer',
      'number',
      'array',
    ]);
    expect(properties['format']).toMatchObject({ type: 'string', minLength: 1 });
    expect(properties['format']?.['description']).toMatch(/^"path": /);
    expect(argument['required']).toEqual(['name', 'type']);
  });

  it('R5.1: the rendered schema is stable and newline-terminated', () => {
    const text = renderJsonSchema(mtdfJsonSchema());
    expect(text.endsWith('}\n')).toBe(true);
    expect(renderJsonSchema(mtdfJsonSchema())).toBe(text);
    expect(JSON.parse(text)).toEqual(mtdfJsonSchema());
  });
});
