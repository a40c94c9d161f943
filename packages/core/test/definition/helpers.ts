// Shared helpers for the definition tests: fixture paths and in-memory checking of definitions the
// way the loader checks them (per file, then as one set).
import { join } from 'node:path';
import { expect } from 'vitest';
import { fileURLToPath } from 'node:url';
import { DocumentChecker } from '../../src/definition/check-document.js';
import { checkDefinitionSet, type CheckedDefinition } from '../../src/definition/definition-set.js';
import type { Diagnostic } from '../../src/definition/diagnostic.js';
import type { ToolLeaf } from '../../src/definition/flatten.js';
import { mergeGuidance, type GuidanceBlocks } from '../../src/definition/guidance.js';
import { validateToolFiles } from '../../src/definition/validate-files.js';

export const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

export function fixture(...segments: string[]): string {
  return join(FIXTURES, ...segments);
}

/** The diagnostics ahma-validate reports for one file (checked together with its directory). */
export async function validateOne(file: string): Promise<readonly Diagnostic[]> {
  const report = await validateToolFiles([file]);
  expect(report.files).toHaveLength(1);
  return report.files[0]?.diagnostics ?? [];
}

/** The one diagnostic a broken fixture must produce: exactly one, for that file. */
export async function onlyDiagnostic(name: string): Promise<Diagnostic> {
  const file = fixture('broken', name);
  const diagnostics = await validateOne(file);
  expect(diagnostics, JSON.stringify(diagnostics)).toHaveLength(1);
  const [only] = diagnostics;
  if (only === undefined) throw new Error('unreachable');
  expect(only.file).toBe(file);
  return only;
}

const checker = new DocumentChecker();

export interface SetOutcome {
  readonly accepted: readonly CheckedDefinition[];
  readonly diagnostics: readonly Diagnostic[];
}

/** Checks in-memory documents (file name → JSON value) per file and then as one set. */
export function checkDocuments(
  documents: Readonly<Record<string, unknown>>,
  guidance?: GuidanceBlocks,
): SetOutcome {
  const candidates: CheckedDefinition[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const [file, document] of Object.entries(documents)) {
    const result = checker.checkDefinition(file, JSON.stringify(document, null, 2));
    if (result.ok) {
      candidates.push({ file, definition: result.definition, leaves: result.leaves });
      diagnostics.push(...result.warnings);
    } else {
      diagnostics.push(...result.diagnostics);
    }
  }
  const set = checkDefinitionSet(candidates, mergeGuidance(guidance));
  return { accepted: set.accepted, diagnostics: [...diagnostics, ...set.diagnostics] };
}

/** The diagnostics for a single in-memory definition (alone in its set). */
export function diagnosticsFor(
  document: unknown,
  guidance?: GuidanceBlocks,
): readonly Diagnostic[] {
  return checkDocuments({ 'tool.json': document }, guidance).diagnostics;
}

/** The leaves of a definition that must be valid. */
export function leavesOf(document: unknown): readonly ToolLeaf[] {
  const result = checker.checkDefinition('tool.json', JSON.stringify(document));
  if (!result.ok) throw new Error(`invalid definition: ${JSON.stringify(result.diagnostics)}`);
  return result.leaves;
}

/** A minimal valid definition with one leaf holding `leaf` (merged over a default leaf). */
export function toolWithLeaf(
  leaf: Record<string, unknown>,
  tool: Record<string, unknown> = {},
): unknown {
  return {
    name: 'demo',
    description: 'A demo tool.',
    command: 'demo',
    ...tool,
    subcommand: [{ name: 'run', description: 'Run it.', ...leaf }],
  };
}
