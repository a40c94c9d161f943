// Structural validation of a parsed document against a generated JSON Schema (ajv, all errors),
// turned into diagnostics a person can act on.
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { diagnostic, type Diagnostic } from './diagnostic.js';
import type { JsonSchema } from './json-schema.js';
import { closestMatch } from './suggest.js';

export type SchemaCheck = (file: string, document: unknown) => Diagnostic[];

/** What the checked values are called in messages: "unknown key" or "unknown argument". */
export type Noun = 'key' | 'argument';

/**
 * Compiles schemas into checks that share one ajv instance (creating ajv is the expensive part).
 * `format: "path"` is accepted here; path values are checked against the scope when resolved.
 */
export function createSchemaCompiler(noun: Noun = 'key'): (schema: JsonSchema) => SchemaCheck {
  // verbose: errors carry the failing data and parent schema, which the messages quote.
  const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: true, allowUnionTypes: true });
  ajv.addFormat('path', true);
  return (schema) => {
    const validate = ajv.compile(schema);
    return (file, document) => (validate(document) ? [] : toDiagnostics(file, validate, noun));
  };
}

function toDiagnostics(file: string, validate: ValidateFunction, noun: Noun): Diagnostic[] {
  const errors = validate.errors ?? [];
  // A value that fails "type" also fails every keyword below it; report the type alone.
  const wrongType = new Set(errors.filter((e) => e.keyword === 'type').map((e) => e.instancePath));
  return errors
    .filter((e) => e.keyword === 'type' || !wrongType.has(e.instancePath) || isKeyError(e))
    .filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf')
    .map((e) => toDiagnostic(file, e, noun))
    .filter(uniqueBy((d) => `${d.pointer}\u0000${d.message}`));
}

function isKeyError(error: ErrorObject): boolean {
  return error.keyword === 'required' || error.keyword === 'additionalProperties';
}

function toDiagnostic(file: string, error: ErrorObject, noun: Noun): Diagnostic {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(params['additionalProperty']);
      const known = Object.keys(
        (error.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties ??
          {},
      );
      const suggestion = closestMatch(key, known);
      return diagnostic(
        file,
        `${error.instancePath}/${escapeSegment(key)}`,
        `unknown ${noun} "${key}"`,
        suggestion === undefined ? `allowed: ${known.join(', ')}` : `did you mean "${suggestion}"?`,
      );
    }
    case 'required': {
      const missing = String(params['missingProperty']);
      const about = (
        error.parentSchema as { properties?: Record<string, { description?: string }> } | undefined
      )?.properties?.[missing]?.description;
      return diagnostic(
        file,
        `${error.instancePath}/${escapeSegment(missing)}`,
        `missing required ${noun} "${missing}"`,
        about,
      );
    }
    case 'type':
      return diagnostic(file, error.instancePath, `must be ${article(String(params['type']))}`);
    case 'enum':
      return diagnostic(
        file,
        error.instancePath,
        `must be one of ${(params['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      );
    case 'const':
      return diagnostic(
        file,
        error.instancePath,
        `must be ${JSON.stringify(params['allowedValue'])}`,
      );
    case 'pattern': {
      // The field's description alone need not state the rule (the tool name's does not), so the
      // pattern is always part of the hint.
      const description = (error.parentSchema as { description?: string } | undefined)?.description;
      const rule = `must match ${String(params['pattern'])}`;
      return diagnostic(
        file,
        error.instancePath,
        `${JSON.stringify(error.data)} is not allowed here`,
        description === undefined ? rule : `${description} It ${rule}`,
      );
    }
    case 'minimum':
    case 'maximum':
      return diagnostic(
        file,
        error.instancePath,
        `${JSON.stringify(error.data)} is out of range`,
        `must be ${error.keyword === 'minimum' ? '≥' : '≤'} ${String(params['limit'])}`,
      );
    case 'minItems':
      return diagnostic(
        file,
        error.instancePath,
        'must not be empty',
        'remove the key or add an element',
      );
    default:
      return diagnostic(file, error.instancePath, error.message ?? `fails ${error.keyword}`);
  }
}

/** "a string", "an integer": the type name with its indefinite article. */
export function article(type: string): string {
  const name = type.replaceAll(',', ' or ');
  return /^[aeiou]/.test(name) ? `an ${name}` : `a ${name}`;
}

function escapeSegment(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

function uniqueBy<T>(key: (item: T) => string): (item: T) => boolean {
  const seen = new Set<string>();
  return (item) => {
    const k = key(item);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  };
}
