// Everything that can be checked about one file on its own: JSON syntax, the schema, and the
// semantic rules. Cross-file rules run afterwards over the files that pass (definition-set.ts).
import type { Diagnostic } from './diagnostic.js';
import { flattenDefinition, type ToolLeaf } from './flatten.js';
import { mtdfJsonSchema, toolGuidanceJsonSchema } from './json-schema.js';
import { parseJsonDocument } from './parse-json.js';
import { createSchemaCompiler } from './schema-check.js';
import type { ToolDefinition, ToolGuidance } from './schema.js';
import { checkDefinition } from './semantic.js';

export type DefinitionCheck =
  | {
      readonly ok: true;
      readonly definition: ToolDefinition;
      readonly leaves: readonly ToolLeaf[];
    }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

export type GuidanceCheck =
  | { readonly ok: true; readonly guidance: ToolGuidance }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

/** Checks definition and guidance documents; compiles the schemas once per instance. */
export class DocumentChecker {
  readonly #compile = createSchemaCompiler('key');
  readonly #definitionSchema = this.#compile(mtdfJsonSchema());
  readonly #guidanceSchema = this.#compile(toolGuidanceJsonSchema());

  checkDefinition(file: string, text: string): DefinitionCheck {
    const parsed = parseJsonDocument(file, text);
    if (!parsed.ok) return parsed;
    const structural = this.#definitionSchema(file, parsed.value);
    if (structural.length > 0) return { ok: false, diagnostics: structural };
    // The schema check above guarantees the shape the zod-derived type describes.
    const definition = parsed.value as ToolDefinition;
    const leaves = flattenDefinition(definition);
    const semantic = checkDefinition(file, definition, leaves);
    if (semantic.length > 0) return { ok: false, diagnostics: semantic };
    return { ok: true, definition, leaves };
  }

  checkGuidance(file: string, text: string): GuidanceCheck {
    const parsed = parseJsonDocument(file, text);
    if (!parsed.ok) return parsed;
    const structural = this.#guidanceSchema(file, parsed.value);
    if (structural.length > 0) return { ok: false, diagnostics: structural };
    return { ok: true, guidance: parsed.value as ToolGuidance };
  }
}
