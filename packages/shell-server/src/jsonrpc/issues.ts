// One clear line for a schema violation (SPEC §6): the SDK validates messages with zod, whose raw
// issue dumps are multi-line JSON an agent or a person cannot act on. This names the field and
// what it must be: `"arguments" must be an object`, `"clientInfo.version" is required`.

/** The fields of a zod issue read here (the SDK's zod 4 issues have this shape). */
export interface SchemaIssue {
  readonly code: string;
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly expected?: string;
  readonly values?: readonly unknown[];
  readonly keys?: readonly string[];
  readonly errors?: readonly (readonly SchemaIssue[])[];
}

const NOUNS: Readonly<Record<string, string>> = {
  object: 'an object',
  record: 'an object',
  array: 'an array',
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
  null: 'null',
};

/**
 * `"field" must be …` for `issue`, found while validating `input`. A leading `params` is left out
 * of longer paths: a request's fields are what its method's documentation names.
 */
export function describeIssue(issue: SchemaIssue, input: unknown): string {
  const path =
    issue.path[0] === 'params' && issue.path.length > 1 ? issue.path.slice(1) : issue.path;
  if (issue.code === 'unrecognized_keys') {
    const keys = (issue.keys ?? []).map((key) => `"${key}"`).join(', ');
    const where = path.length === 0 ? '' : ` in "${path.map(String).join('.')}"`;
    return `unexpected ${issue.keys?.length === 1 ? 'key' : 'keys'} ${keys}${where}`;
  }
  if (path.length === 0) return issue.message;
  const field = `"${path.map(String).join('.')}"`;
  if (valueAt(input, issue.path) === undefined) return `${field} is required`;
  const expected = expectedOf(issue);
  if (expected !== undefined) return `${field} must be ${expected}`;
  return `${field}: ${issue.message}`;
}

/** "a string", "a string or an integer", "\"2.0\"": what the issue says the value must be. */
function expectedOf(issue: SchemaIssue): string | undefined {
  if (issue.code === 'invalid_type' && issue.expected !== undefined) {
    return NOUNS[issue.expected] ?? issue.expected;
  }
  if (issue.code === 'invalid_value' && issue.values !== undefined) {
    return issue.values.map((value) => JSON.stringify(value)).join(' or ');
  }
  if (issue.code === 'invalid_union' && issue.errors !== undefined) {
    const branches = issue.errors.map((branch) => {
      const [first] = branch;
      return first?.path.length === 0 ? expectedOf(first) : undefined;
    });
    if (branches.every((branch) => branch !== undefined)) return branches.join(' or ');
  }
  return undefined;
}

/** The value at `path` inside `input`, or undefined when any step is missing. */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
