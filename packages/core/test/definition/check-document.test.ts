// R5.1: the checker accepts a document on the zod schema's word and asks ajv (the generated JSON
// Schema, the authority) only when zod refuses. That is sound only if the two agree: they must on
// every fixture and on every single-value mutation of the valid ones.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ZodType } from 'zod';
import { describe, expect, it } from 'vitest';
import { DocumentChecker } from '../../src/definition/check-document.js';
import {
  mtdfJsonSchema,
  toolGuidanceJsonSchema,
  type JsonSchema,
} from '../../src/definition/json-schema.js';
import { createSchemaCompiler } from '../../src/definition/schema-check.js';
import { toolDefinitionSchema, toolGuidanceSchema } from '../../src/definition/schema.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures');

function jsonFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return jsonFiles(path);
    return entry.name.endsWith('.json') ? [path] : [];
  });
}

function parsed(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined; // the syntax-error fixtures never reach a schema
  }
}

/** The document with one value replaced or one unknown key added, for every place in it. */
function mutations(document: unknown): unknown[] {
  const replacements: unknown[] = [null, 1.5, -1, 0, 'x', '', true, [], {}, [1], 2 ** 60];
  const out: unknown[] = [];
  const visit = (node: unknown, rebuild: (value: unknown) => unknown): void => {
    for (const value of replacements) out.push(rebuild(value));
    if (Array.isArray(node)) {
      node.forEach((item, index) =>
        visit(item, (value) => rebuild(node.map((old, i) => (i === index ? value : old)))),
      );
    } else if (typeof node === 'object' && node !== null) {
      out.push(rebuild({ ...node, unknown_key: 1 }));
      for (const [key, item] of Object.entries(node)) {
        visit(item, (value) => rebuild({ ...node, [key]: value }));
        out.push(rebuild(Object.fromEntries(Object.entries(node).filter(([k]) => k !== key))));
      }
    }
  };
  visit(document, (value) => value);
  return out;
}

function expectAgreement(zod: ZodType, schema: JsonSchema, documents: unknown[]): void {
  const ajv = createSchemaCompiler('key')(schema);
  let refused = 0;
  for (const document of documents) {
    const byAjv = ajv('doc.json', document).length === 0;
    if (!byAjv) refused++;
    expect({ document, byZod: zod.safeParse(document).success }).toEqual({
      document,
      byZod: byAjv,
    });
  }
  expect(refused).toBeGreaterThan(0); // the mutations do reach invalid documents
}

describe('DocumentChecker: zod first, ajv for the diagnostics', () => {
  const files = jsonFiles(fixtures);
  const guidance = files.filter((file) => file.endsWith('tool_guidance.json'));
  const definitions = files.filter((file) => !file.endsWith('tool_guidance.json'));

  it('R5.1: zod and the generated JSON Schema agree on every definition fixture and its mutations', () => {
    const valid = definitions.filter((file) => file.includes(`${join('fixtures', 'valid')}`));
    expect(valid.length).toBeGreaterThan(3);
    const documents = [
      ...definitions.map(parsed).filter((document) => document !== undefined),
      ...valid.flatMap((file) => mutations(parsed(file))),
    ];
    expectAgreement(toolDefinitionSchema, mtdfJsonSchema(), documents);
  });

  it('R5.1: zod and the generated JSON Schema agree on every guidance fixture and its mutations', () => {
    expect(guidance.length).toBeGreaterThan(1);
    const documents = guidance.flatMap((file) => [parsed(file), ...mutations(parsed(file))]);
    expectAgreement(toolGuidanceSchema, toolGuidanceJsonSchema(), documents);
  });

  it('R5.2: a document zod refuses still gets the full ajv diagnostics', () => {
    const check = new DocumentChecker().checkDefinition(
      'bad.json',
      JSON.stringify({
        name: 'x',
        description: 'd',
        command: 'x',
        subcommand: [{ name: 'a', description: 'd', colour: 'red' }],
      }),
    );
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.diagnostics).toEqual([
      expect.objectContaining({ file: 'bad.json', message: expect.stringContaining('colour') }),
    ]);
  });
});
