// Everything that can be checked about one file on its own: JSON syntax, the schema, and the
// semantic rules. Cross-file rules run afterwards over the files that pass (definition-set.ts).
import type { ZodType } from 'zod';
import { diagnostic, isError, type Diagnostic } from './diagnostic.js';
import { flattenDefinition, type ToolLeaf } from './flatten.js';
import { leafInputSchema } from './input-schema.js';
import { mtdfJsonSchema, toolGuidanceJsonSchema, type JsonSchema } from './json-schema.js';
import { normalizeDefinition, unknownTopLevelKeyWarnings } from './normalize.js';
import { parseJsonDocument } from './parse-json.js';
import { createSchemaCompiler, type SchemaCheck } from './schema-check.js';
import {
  toolDefinitionSchema,
  toolGuidanceSchema,
  type ToolDefinition,
  type ToolGuidance,
} from './schema.js';
import { checkDefinition } from './semantic.js';

export type DefinitionCheck =
  | {
      readonly ok: true;
      readonly definition: ToolDefinition;
      readonly leaves: readonly ToolLeaf[];
      /** Problems that do not reject the file (R5.2). */
      readonly warnings: readonly Diagnostic[];
    }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

export type GuidanceCheck =
  | { readonly ok: true; readonly guidance: ToolGuidance }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

export interface DocumentCheckerOptions {
  /**
   * Also compile each tool's input schema with the compiler tools/call validates arguments with
   * (ArgumentValidator), and refuse a file whose schema it cannot compile. ahma-validate does; a
   * server does not (about 0.5 s of every start with two bundles): ArgumentValidator compiles a
   * schema at its tool's first call and turns a failure into that call's error.
   */
  readonly compileInputSchemas?: boolean;
}

/** Checks definition and guidance documents. */
export class DocumentChecker {
  readonly #definitionSchema = structuralCheck(toolDefinitionSchema, mtdfJsonSchema);
  readonly #guidanceSchema = structuralCheck(toolGuidanceSchema, toolGuidanceJsonSchema);
  readonly #compileArguments: ((schema: JsonSchema) => SchemaCheck) | undefined;

  constructor(options: DocumentCheckerOptions = {}) {
    this.#compileArguments = options.compileInputSchemas
      ? createSchemaCompiler('argument')
      : undefined;
  }

  checkDefinition(file: string, text: string): DefinitionCheck {
    const parsed = parseJsonDocument(file, text);
    if (!parsed.ok) return parsed;
    const structural = this.#definitionSchema(file, parsed.value);
    if (structural.length > 0) {
      // The keys the file's top level has that Ahma ignores are said now too, not after a fix.
      const ignored = unknownTopLevelKeyWarnings(file, parsed.value);
      return { ok: false, diagnostics: [...structural, ...ignored] };
    }
    // The schema check above guarantees the shape the zod-derived type describes.
    const normalized = normalizeDefinition(file, parsed.value as ToolDefinition);
    const { definition } = normalized;
    const leaves = flattenDefinition(definition);
    const found = [...normalized.diagnostics, ...checkDefinition(file, definition, leaves)];
    if (found.some(isError)) return { ok: false, diagnostics: found };
    const uncompilable = leaves.flatMap((leaf) => this.#inputSchemaProblems(file, leaf));
    if (uncompilable.length > 0) return { ok: false, diagnostics: [...found, ...uncompilable] };
    return { ok: true, definition, leaves, warnings: found };
  }

  #inputSchemaProblems(file: string, leaf: ToolLeaf): Diagnostic[] {
    if (this.#compileArguments === undefined) return [];
    try {
      this.#compileArguments(leafInputSchema(leaf));
      return [];
    } catch (error) {
      return [
        diagnostic(
          file,
          leaf.pointer,
          `the input schema of tool "${leaf.name}" cannot be compiled: ${error instanceof Error ? error.message : String(error)}`,
          'please report this: the definition passed every check, so Ahma generated a bad schema',
        ),
      ];
    }
  }

  checkGuidance(file: string, text: string): GuidanceCheck {
    const parsed = parseJsonDocument(file, text);
    if (!parsed.ok) return parsed;
    const structural = this.#guidanceSchema(file, parsed.value);
    if (structural.length > 0) return { ok: false, diagnostics: structural };
    return { ok: true, guidance: parsed.value as ToolGuidance };
  }
}

/**
 * The structural check of one kind of document. The JSON Schema generated from the zod source is
 * the authority and gives the diagnostics, but compiling it with ajv costs ~50 ms, so a document
 * is first parsed with the zod schema itself, which needs no compilation: a document zod accepts
 * passes (the two agree on every fixture: check-document.test.ts), and only a document zod
 * refuses is checked by ajv, compiled on first need.
 */
function structuralCheck(zod: ZodType, generate: () => JsonSchema): SchemaCheck {
  let ajvCheck: SchemaCheck | undefined;
  return (file, document) => {
    if (zod.safeParse(document).success) return [];
    ajvCheck ??= createSchemaCompiler('key')(generate());
    return ajvCheck(file, document);
  };
}
