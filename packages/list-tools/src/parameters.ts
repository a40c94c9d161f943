// Turns a tool's inputSchema (JSON Schema, as any server sends it) into one row per parameter, with a
// short human-readable type: `string`, `array<string>`, `"a"|"b"`, `integer|null`.

/** One top-level parameter of a tool, as printed by ahma-list-tools. */
export interface Parameter {
  name: string;
  type: string;
  required: boolean;
  /** The parameter's description, or null when the schema gives none. */
  description: string | null;
}

type Schema = Record<string, unknown>;

/** The parameters of an inputSchema, in the server's order; required ones are marked, not moved. */
export function describeParameters(inputSchema: Schema): Parameter[] {
  const properties = asSchema(inputSchema['properties']) ?? {};
  const required = new Set(
    Array.isArray(inputSchema['required'])
      ? inputSchema['required'].filter((name) => typeof name === 'string')
      : [],
  );
  return Object.entries(properties).map(([name, value]) => {
    const schema = asSchema(value) ?? {};
    const description = schema['description'];
    return {
      name,
      type: schemaType(schema),
      required: required.has(name),
      description: typeof description === 'string' ? description : null,
    };
  });
}

// Deep enough for any real schema; guards against self-referencing ones.
const MAX_DEPTH = 8;

/** A one-word-ish rendering of a JSON Schema's type. */
export function schemaType(value: unknown, depth = 0): string {
  const schema = asSchema(value);
  if (schema === undefined) return value === false ? 'never' : 'any';
  if (depth > MAX_DEPTH) return 'any';

  if (Array.isArray(schema['enum']) && schema['enum'].length > 0) {
    return schema['enum'].map((member) => JSON.stringify(member)).join('|');
  }
  if ('const' in schema) return JSON.stringify(schema['const']);

  const type = schema['type'];
  if (typeof type === 'string') return withItems(type, schema, depth);
  if (Array.isArray(type) && type.length > 0) {
    return type.map((member) => withItems(String(member), schema, depth)).join('|');
  }

  for (const key of ['anyOf', 'oneOf'] as const) {
    const members = schema[key];
    if (Array.isArray(members) && members.length > 0) {
      return unique(members.map((member) => schemaType(member, depth + 1))).join('|');
    }
  }
  const allOf = schema['allOf'];
  if (Array.isArray(allOf) && allOf.length === 1) return schemaType(allOf[0], depth + 1);

  const ref = schema['$ref'];
  if (typeof ref === 'string') return ref.slice(ref.lastIndexOf('/') + 1) || ref;
  if ('properties' in schema) return 'object';
  if ('items' in schema) return withItems('array', schema, depth);
  return 'any';
}

function withItems(type: string, schema: Schema, depth: number): string {
  if (type !== 'array' || !('items' in schema)) return type;
  return `array<${schemaType(schema['items'], depth + 1)}>`;
}

function asSchema(value: unknown): Schema | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Schema)
    : undefined;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
