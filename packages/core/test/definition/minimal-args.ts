// A minimal valid argument object for a tool's inputSchema: every required property, with the
// simplest value of its type (the first enum value when there is one). Shared with the
// shell-server property test, which calls generated tools through the real server.
type Schema = {
  type?: string;
  enum?: unknown[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
};

/** "a" for strings (a relative path inside the scope when the string is a path). */
export function minimalValue(schema: Schema): unknown {
  if (schema.enum !== undefined && schema.enum.length > 0) return schema.enum[0];
  switch (schema.type) {
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [minimalValue(schema.items ?? { type: 'string' })];
    case 'object':
      return minimalArgs(schema);
    default:
      return 'a';
  }
}

export function minimalArgs(schema: Schema): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const name of schema.required ?? []) {
    // The working directory is the meta-parameter: "." is the scope itself.
    args[name] = name === 'working_directory' ? '.' : minimalValue(schema.properties?.[name] ?? {});
  }
  return args;
}
