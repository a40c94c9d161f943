// R5.1/R5.2/R5.3: JSON syntax and schema (ajv, all errors) checks of one definition file.
import { describe, expect, it } from 'vitest';
import { DocumentChecker } from '../../src/definition/check-document.js';
import { parseJsonDocument } from '../../src/definition/parse-json.js';
import { diagnosticsFor, onlyDiagnostic, toolWithLeaf } from './helpers.js';

describe('JSON syntax', () => {
  it('R5.2: invalid JSON syntax is reported with line and column and a fix hint', async () => {
    const d = await onlyDiagnostic('invalid-json-syntax.json');
    expect(d.pointer).toBe('');
    expect(d.message).toBe('invalid JSON at line 5, column 1: property name expected');
    expect(d.hint).toBe('keys are double-quoted strings; no trailing comma');
  });

  it('R5.2: a syntax error deep in a file points at its own line and column', () => {
    const result = parseJsonDocument('f.json', '{\n  "name": "x",\n  "command": \'ls\'\n}');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.diagnostics).toHaveLength(1);
    expect(result.diagnostics[0]?.message).toMatch(/^invalid JSON at line 3, column 14: /);
    expect(result.diagnostics[0]?.hint).toMatch(/single quotes/);
  });

  it('R5.2: comments and empty files are refused', () => {
    const commented = parseJsonDocument('f.json', '{ // note\n "a": 1 }');
    expect(commented.ok).toBe(false);
    const empty = parseJsonDocument('f.json', '');
    expect(empty.ok).toBe(false);
    if (!empty.ok)
      expect(empty.diagnostics[0]?.message).toBe(
        'invalid JSON at line 1, column 1: value expected',
      );
  });

  it('R5.2: a duplicate JSON key is an error at its pointer, with line and column', async () => {
    const d = await onlyDiagnostic('duplicate-json-key.json');
    expect(d.pointer).toBe('/description');
    expect(d.message).toBe('duplicate key "description" at line 5, column 3');
    expect(d.hint).toBe('keep one; JSON parsers silently use the last');
  });

  it('R5.2: a nested duplicate key points into the nested object', () => {
    const text = '{"subcommand": [{"name": "a"}, {"name": "b", "name": "c"}]}';
    const result = parseJsonDocument('f.json', text);
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.diagnostics.map((d) => d.pointer)).toEqual(['/subcommand/1/name']);
  });

  it('R5.2: keys and strings holding quotes, colons and escapes are counted right: a duplicate is still found', () => {
    const tricky = '{"a\\"b": "x\\": y", "c": ["d:", {"e": "\\\\"}], "f\\\\": 1}';
    expect(parseJsonDocument('f.json', tricky)).toEqual({
      ok: true,
      value: JSON.parse(tricky) as unknown,
    });
    const twice = '{"a\\"b": "x\\": y", "c": [{"e": "\\\\", "e": 2}]}';
    const result = parseJsonDocument('f.json', twice);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.diagnostics.map((d) => d.pointer)).toEqual(['/c/0/e']);
  });

  it('R5.2: the same key in sibling objects is not a duplicate', () => {
    const result = parseJsonDocument('f.json', '{"a": {"name": 1}, "b": {"name": 2}}');
    expect(result).toEqual({ ok: true, value: { a: { name: 1 }, b: { name: 2 } } });
  });
});

describe('schema checks', () => {
  it('R5.2: an unknown key below the top level is an error with a did-you-mean hint', async () => {
    const d = await onlyDiagnostic('unknown-key.json');
    expect(d.pointer).toBe('/subcommand/0/timeout_secnds');
    expect(d.message).toBe('unknown key "timeout_secnds"');
    expect(d.hint).toBe('did you mean "timeout_seconds"?');
  });

  it('R5.2: unknown keys are errors at every level (subcommand, argument, step)', () => {
    const diagnostics = diagnosticsFor(
      toolWithLeaf({
        optons: [],
        positional_args: [{ name: 'file', type: 'string', requird: true }],
        sequence: [{ tool: 'sandboxed_shell', arg: {} }],
      }),
    );
    expect(diagnostics.map((d) => [d.pointer, d.message, d.hint])).toEqual(
      expect.arrayContaining([
        ['/subcommand/0/optons', 'unknown key "optons"', 'did you mean "options"?'],
        [
          '/subcommand/0/positional_args/0/requird',
          'unknown key "requird"',
          'did you mean "required"?',
        ],
        ['/subcommand/0/sequence/0/arg', 'unknown key "arg"', 'did you mean "args"?'],
      ]),
    );
  });

  it('R5.2: an unknown key nothing resembles lists the allowed keys', () => {
    const [d, ...rest] = diagnosticsFor(toolWithLeaf({ colour: 'red' }));
    expect(rest).toEqual([]);
    expect(d?.pointer).toBe('/subcommand/0/colour');
    expect(d?.severity).toBe('error');
    expect(d?.hint).toMatch(/^allowed: name, description, enabled, /);
  });

  it('R5.2: a missing required key is an error at the pointer of the key to add', async () => {
    const d = await onlyDiagnostic('missing-required-key.json');
    expect(d.pointer).toBe('/command');
    expect(d.message).toBe('missing required key "command"');
  });

  it('R5.2: a value of the wrong type is an error naming the expected type', async () => {
    const d = await onlyDiagnostic('wrong-type.json');
    expect(d.pointer).toBe('/synchronous');
    expect(d.message).toBe('must be a boolean');
  });

  it('R5.1: all errors of a file are reported at once (ajv allErrors), with the top-level keys it ignores', () => {
    const diagnostics = diagnosticsFor({
      name: 'x',
      description: 'd',
      synchronous: 'yes',
      timeout_seconds: 0,
      colour: 'red',
    });
    expect(diagnostics.map((d) => d.pointer).sort()).toEqual(
      ['/colour', '/command', '/synchronous', '/timeout_seconds'].sort(),
    );
  });

  it('R5.1: a type error is not echoed by the keywords below it', () => {
    const diagnostics = diagnosticsFor({
      name: 'x',
      description: 'd',
      command: 'x',
      subcommand: 'build',
    });
    expect(diagnostics).toEqual([
      { file: 'tool.json', pointer: '/subcommand', message: 'must be an array', severity: 'error' },
    ]);
  });

  it('R5.1: a document that is not an object is refused at the root pointer', () => {
    expect(diagnosticsFor([])).toEqual([
      { file: 'tool.json', pointer: '', message: 'must be an object', severity: 'error' },
    ]);
  });

  it('R5.1: an empty list is refused with a hint', () => {
    const [d] = diagnosticsFor({ name: 'x', description: 'd', command: 'x', subcommand: [] });
    expect(d).toMatchObject({
      pointer: '/subcommand',
      message: 'must not be empty',
      severity: 'error',
    });
    expect(d?.hint).toBe('remove the key or add an element');
  });

  it('R5.1: a definition name with a space is refused with the naming rule as hint', () => {
    const [d] = diagnosticsFor({ name: 'my tool', description: 'd', command: 'x' });
    expect(d?.pointer).toBe('/name');
    expect(d?.message).toBe('"my tool" is not allowed here');
    expect(d?.hint).toContain('must match ^[A-Za-z0-9][A-Za-z0-9_-]*$');
  });

  it('R5.1: a bad subcommand or argument name states the rule it breaks', () => {
    const diagnostics = diagnosticsFor(
      toolWithLeaf({ name: 'no spaces', options: [{ name: '--', type: 'string' }] }),
    );
    expect(diagnostics.map((d) => d.pointer)).toEqual([
      '/subcommand/0/name',
      '/subcommand/0/options/0/name',
    ]);
    for (const d of diagnostics) expect(d.hint).toMatch(/must match \^/);
  });

  it('R5.3: timeout_seconds 0 is refused', async () => {
    const d = await onlyDiagnostic('timeout-below-minimum.json');
    expect(d.pointer).toBe('/timeout_seconds');
    expect(d.message).toBe('0 is out of range');
    expect(d.hint).toBe('must be ≥ 1');
  });

  it('R5.3: timeout_seconds 86401 is refused', async () => {
    const d = await onlyDiagnostic('timeout-above-maximum.json');
    expect(d.pointer).toBe('/timeout_seconds');
    expect(d.message).toBe('86401 is out of range');
    expect(d.hint).toBe('must be ≤ 86400');
  });

  it.each([1, 86_400])(
    'R5.3: timeout_seconds %i is accepted on the tool and on a subcommand',
    (timeout) => {
      expect(
        diagnosticsFor(toolWithLeaf({ timeout_seconds: timeout }, { timeout_seconds: timeout })),
      ).toEqual([]);
    },
  );

  it('R5.3: timeout_seconds must be a whole number', () => {
    const [d] = diagnosticsFor(toolWithLeaf({ timeout_seconds: 1.5 }));
    expect(d).toMatchObject({
      pointer: '/subcommand/0/timeout_seconds',
      message: 'must be an integer',
      severity: 'error',
    });
  });

  it('R5.3: an argument type outside string/boolean/integer/number/array is refused', () => {
    const [d] = diagnosticsFor(toolWithLeaf({ options: [{ name: 'when', type: 'date' }] }));
    expect(d?.pointer).toBe('/subcommand/0/options/0/type');
    expect(d?.message).toBe('must be one of "string", "boolean", "integer", "number", "array"');
  });

  it('R5.3: every argument type, required, enum, default and format path are accepted', () => {
    const diagnostics = diagnosticsFor(
      toolWithLeaf({
        options: [
          { name: 'verbose', type: 'boolean', alias: 'v' },
          { name: 'jobs', type: 'integer', default: 2 },
          { name: 'ratio', type: 'number', default: 0.5 },
          { name: 'mode', type: 'string', enum: ['fast', 'slow'], default: 'fast', required: true },
          {
            name: 'include',
            type: 'array',
            items: { type: 'string', format: 'path' },
            default: ['src'],
          },
          { name: 'levels', type: 'array', items: { type: 'integer', enum: [1, 2, 3] } },
          { name: 'config', type: 'string', format: 'path' },
        ],
        positional_args: [{ name: 'target', type: 'string', required: true }],
      }),
    );
    expect(diagnostics).toEqual([]);
  });

  it('R5.1: the guidance file is checked against its own schema', () => {
    const checker = new DocumentChecker();
    expect(
      checker.checkGuidance('tool_guidance.json', '{"guidance_blocks": {"a": "text"}}'),
    ).toEqual({
      ok: true,
      guidance: { guidance_blocks: { a: 'text' } },
    });
    const bad = checker.checkGuidance('tool_guidance.json', '{"guidance_block": {}}');
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.diagnostics.map((d) => [d.pointer, d.hint])).toEqual(
        expect.arrayContaining([['/guidance_block', 'did you mean "guidance_blocks"?']]),
      );
    }
  });
});
