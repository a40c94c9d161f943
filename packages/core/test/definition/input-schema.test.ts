// R5.3: each tool's inputSchema is generated from its definition; calls are validated against it and
// a bad call gets an error naming the field.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it, vi } from 'vitest';
import type { ToolLeaf } from '../../src/definition/flatten.js';
import type { JsonSchema } from '../../src/definition/json-schema.js';
import {
  ArgumentValidator,
  callMaxOutputTokens,
  isMetaParameter,
  leafInputSchema,
} from '../../src/definition/input-schema.js';
import { leavesOf, toolWithLeaf } from './helpers.js';

function onlyLeaf(leafFields: Record<string, unknown>): ToolLeaf {
  const [leaf] = leavesOf(toolWithLeaf(leafFields));
  if (leaf === undefined) throw new Error('no leaf');
  return leaf;
}

const build = onlyLeaf({
  options: [
    { name: 'release', type: 'boolean', description: 'Optimise.' },
    { name: 'jobs', type: 'integer', default: 2 },
    { name: 'ratio', type: 'number' },
    { name: 'profile', type: 'string', enum: ['dev', 'release'], required: true },
    { name: 'features', type: 'array', items: { type: 'string', enum: ['a', 'b'] } },
    { name: 'manifest-path', type: 'string', format: 'path' },
  ],
  positional_args: [
    { name: 'paths', type: 'array', required: true, items: { type: 'string', format: 'path' } },
  ],
});
const schema = leafInputSchema(build);

describe('leafInputSchema', () => {
  // ArgumentValidator compiles without meta-schema validation (start-up time); this is that check.
  it('R5.3: an input schema is valid against the draft 2020-12 meta-schema', () => {
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true });
    expect(ajv.validateSchema(schema)).toBe(true);
    expect(ajv.errors ?? null).toBeNull();
  });

  it('R5.3: properties carry type, description, enum, default, format and items', () => {
    expect(schema['type']).toBe('object');
    const properties = schema['properties'] as Record<string, unknown>;
    expect(properties['release']).toEqual({ type: 'boolean', description: 'Optimise.' });
    expect(properties['jobs']).toEqual({ type: 'integer', default: 2 });
    expect(properties['ratio']).toEqual({ type: 'number' });
    expect(properties['profile']).toEqual({ type: 'string', enum: ['dev', 'release'] });
    expect(properties['features']).toEqual({
      type: 'array',
      items: { type: 'string', enum: ['a', 'b'] },
    });
    expect(properties['manifest-path']).toEqual({ type: 'string', format: 'path' });
    expect(properties['paths']).toEqual({
      type: 'array',
      items: { type: 'string', format: 'path' },
    });
  });

  it('R5.3: required lists the required options and positionals; none → no required key', () => {
    expect(schema['required']).toEqual(['profile', 'paths']);
    expect(leafInputSchema(onlyLeaf({}))).not.toHaveProperty('required');
  });

  it('R5.3: the meta-parameters working_directory and timeout_seconds are present and optional', () => {
    const properties = schema['properties'] as Record<string, Record<string, unknown>>;
    expect(properties['working_directory']).toMatchObject({ type: 'string' });
    expect(properties['timeout_seconds']).toMatchObject({
      type: 'number',
      exclusiveMinimum: 0,
      maximum: 86_400,
    });
    expect(schema['required']).not.toContain('working_directory');
    expect(isMetaParameter('working_directory')).toBe(true);
    expect(isMetaParameter('timeout_seconds')).toBe(true);
    expect(isMetaParameter('release')).toBe(false);
    const empty = leafInputSchema(onlyLeaf({}));
    expect(Object.keys(empty['properties'] as object)).toEqual([
      'working_directory',
      'timeout_seconds',
      'execution_mode',
      'max_output_tokens',
      'pty',
      'stdin',
      'concurrency',
    ]);
  });

  it('R15.4: pty and stdin are optional meta-parameters, never passed to the command', () => {
    const properties = leafInputSchema(onlyLeaf({}))['properties'] as Record<string, unknown>;
    expect(properties['pty']).toMatchObject({ type: 'boolean' });
    expect(properties['stdin']).toMatchObject({ type: 'string', enum: ['open'] });
    expect(isMetaParameter('pty')).toBe(true);
    expect(isMetaParameter('stdin')).toBe(true);
  });

  it('R15.2: max_output_tokens is an optional integer from 100 to 200,000, never passed to the command', () => {
    const properties = schema['properties'] as Record<string, Record<string, unknown>>;
    expect(properties['max_output_tokens']).toMatchObject({
      type: 'integer',
      minimum: 100,
      maximum: 200_000,
    });
    expect(isMetaParameter('max_output_tokens')).toBe(true);
    expect(callMaxOutputTokens({ max_output_tokens: 500 })).toBe(500);
    expect(callMaxOutputTokens({})).toBeUndefined();
    const validator = new ArgumentValidator();
    const good = { profile: 'dev', paths: [] };
    expect(validator.validate(schema, { ...good, max_output_tokens: 500 })).toEqual([]);
    expect(validator.validate(schema, { ...good, max_output_tokens: null })).toEqual([]);
    for (const bad of [99, 200_001, 1.5, '500']) {
      expect(
        validator.validate(schema, { ...good, max_output_tokens: bad }).map((e) => e.field),
      ).toEqual(['max_output_tokens']);
    }
  });

  it('R10.1: execution_mode is an optional enum of Synchronous and AsyncResultPush', () => {
    const properties = schema['properties'] as Record<string, Record<string, unknown>>;
    expect(properties['execution_mode']).toMatchObject({
      type: 'string',
      enum: ['Synchronous', 'AsyncResultPush'],
    });
    expect(isMetaParameter('execution_mode')).toBe(true);
    const validator = new ArgumentValidator();
    expect(
      validator.validate(schema, { profile: 'dev', paths: [], execution_mode: 'Synchronous' }),
    ).toEqual([]);
    expect(
      validator
        .validate(schema, { profile: 'dev', paths: [], execution_mode: 'sync' })
        .map((e) => e.field),
    ).toEqual(['execution_mode']);
  });

  it('R5.3: additional properties are refused', () => {
    expect(schema['additionalProperties']).toBe(false);
  });
});

describe('ArgumentValidator', () => {
  const validator = new ArgumentValidator();
  const good = { profile: 'dev', paths: ['src'] };

  it('SPEC §2: a schema ajv cannot compile (a generator bug) makes every call an error naming it, not a throw', () => {
    const broken = {
      type: 'object',
      properties: { path: { type: 'string', notAKeyword: true } },
    } as unknown as Parameters<ArgumentValidator['validate']>[0];
    for (const args of [{}, { path: 'x' }]) {
      const [error, ...more] = validator.validate(broken, args);
      expect(more).toEqual([]);
      expect(error?.field).toBe('');
      expect(error?.message).toMatch(
        /input schema cannot be compiled \(.*notAKeyword.*\); please report this/,
      );
    }
  });

  it('R5.3: valid arguments (meta-parameters included) pass', () => {
    expect(validator.validate(schema, good)).toEqual([]);
    expect(
      validator.validate(schema, {
        ...good,
        release: true,
        jobs: 4,
        ratio: 0.5,
        features: ['a'],
        'manifest-path': 'Cargo.toml',
        working_directory: 'sub',
        timeout_seconds: 30,
      }),
    ).toEqual([]);
  });

  it('SPEC §2 argv: null is accepted for an optional argument (it unsets it) but not for a required one', () => {
    expect(
      validator.validate(schema, {
        ...good,
        jobs: null,
        ratio: null,
        features: null,
        release: null,
      }),
    ).toEqual([]);
    expect(validator.validate(schema, { ...good, profile: null })).toEqual([
      { field: 'profile', message: 'argument "profile" must be a string' },
    ]);
  });

  it('SPEC §2 argv: null unsets only declared arguments: an undeclared key given null is still an unknown argument', () => {
    expect(validator.validate(schema, { ...good, bogus: null })).toEqual([
      { field: 'bogus', message: expect.stringMatching(/^unknown argument "bogus" \(allowed: /) },
    ]);
    expect(validator.validate(schema, { ...good, relase: null })).toEqual([
      { field: 'relase', message: 'unknown argument "relase" (did you mean "release"?)' },
    ]);
    // A meta-parameter is declared in every schema: null leaves it unset.
    expect(validator.validate(schema, { ...good, timeout_seconds: null })).toEqual([]);
  });

  it('R5.3: a wrong type names the field and the expected type', () => {
    expect(validator.validate(schema, { ...good, jobs: 'four' })).toEqual([
      { field: 'jobs', message: 'argument "jobs" must be an integer' },
    ]);
    expect(validator.validate(schema, { ...good, release: 'yes' })).toEqual([
      { field: 'release', message: 'argument "release" must be a boolean' },
    ]);
  });

  it('R5.3: a missing required argument is named', () => {
    expect(validator.validate(schema, { paths: ['src'] })).toEqual([
      { field: 'profile', message: 'missing required argument "profile"' },
    ]);
  });

  it('R5.3: an unknown argument is named with a did-you-mean hint', () => {
    expect(validator.validate(schema, { ...good, relase: true })).toEqual([
      { field: 'relase', message: 'unknown argument "relase" (did you mean "release"?)' },
    ]);
  });

  it('R5.3: a value outside the enum lists the allowed values', () => {
    expect(validator.validate(schema, { ...good, profile: 'fast' })).toEqual([
      { field: 'profile', message: 'argument "profile" must be one of "dev", "release"' },
    ]);
  });

  it('R5.3: an array element is checked against items and named by its index', () => {
    expect(validator.validate(schema, { ...good, features: ['a', 'c'] })).toEqual([
      { field: 'features/1', message: 'argument "features/1" must be one of "a", "b"' },
    ]);
    expect(validator.validate(schema, { ...good, paths: 'src' })).toEqual([
      { field: 'paths', message: 'argument "paths" must be an array' },
    ]);
  });

  it('R5.3: a bad meta-parameter is named too', () => {
    expect(validator.validate(schema, { ...good, timeout_seconds: 0 })).toEqual([
      { field: 'timeout_seconds', message: 'argument "timeout_seconds" must be > 0' },
    ]);
  });

  it('R5.3: every problem of a call is reported at once', () => {
    const errors = validator.validate(schema, { jobs: 1.5, bogus: 1 });
    expect(errors.map((e) => e.field).sort()).toEqual(['bogus', 'jobs', 'paths', 'profile']);
  });

  it('R5.3: missing arguments count as an empty object; a non-object is refused', () => {
    expect(validator.validate(leafInputSchema(onlyLeaf({})), undefined)).toEqual([]);
    expect(validator.validate(schema, [])).toEqual([
      { field: '', message: 'arguments must be an object' },
    ]);
  });
});

describe('ArgumentValidator: compiled schemas are shared in the process', () => {
  it('SPEC §2: a schema with the text of one compiled before, in any validator, is not compiled again', () => {
    const compile = vi.spyOn(Ajv2020.prototype, 'compile');
    try {
      // A text no other test compiles: the share is the process's.
      const text = JSON.stringify({
        type: 'object',
        properties: { name: { type: 'string', description: `shared ${String(Math.random())}` } },
        required: ['name'],
        additionalProperties: false,
      });
      const [first, second] = [new ArgumentValidator(), new ArgumentValidator()];
      expect(first.validate(JSON.parse(text) as JsonSchema, { name: 'a' })).toEqual([]);
      expect(second.validate(JSON.parse(text) as JsonSchema, {})).toEqual([
        { field: 'name', message: expect.stringMatching(/^missing required argument "name"/) },
      ]);
      expect(compile).toHaveBeenCalledTimes(1);
    } finally {
      compile.mockRestore();
    }
  });
});

describe('SPEC §2 compat: parameters named like Object.prototype members', () => {
  const names = ['constructor', 'toString', 'valueOf', 'hasOwnProperty'];
  const leaf = onlyLeaf({
    options: names.map((name) => ({ name, type: 'string' })),
    positional_args: [{ name: 'isPrototypeOf', type: 'integer' }],
  });
  const inputSchema = leafInputSchema(leaf);

  it('SPEC §2 compat: a tool with an option "constructor" is callable without it (inherited members are not arguments)', () => {
    expect(new ArgumentValidator().validate(inputSchema, {})).toEqual([]);
  });

  it('SPEC §2 compat: a tool with an option "constructor" is callable with it, and its type is still checked', () => {
    const validator = new ArgumentValidator();
    expect(
      validator.validate(inputSchema, {
        constructor: 'a',
        toString: 'b',
        valueOf: 'c',
        hasOwnProperty: 'd',
        isPrototypeOf: 1,
      }),
    ).toEqual([]);
    expect(validator.validate(inputSchema, { constructor: 5 })).toEqual([
      { field: 'constructor', message: 'argument "constructor" must be a string' },
    ]);
  });
});
