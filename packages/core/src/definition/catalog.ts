// The bundled catalog as a whole (SPEC §3 bundles on demand): every valid definition in the
// catalog directory, so a server can offer the ones not yet enabled with `--tools`.
import { DocumentChecker } from './check-document.js';
import type { CheckedDefinition } from './definition-set.js';
import type { Diagnostic } from './diagnostic.js';
import {
  checkDefinitionFiles,
  isGuidanceFile,
  listJsonFiles,
  readErrorDiagnostic,
} from './tool-files.js';

export interface CatalogRead {
  /** The valid definitions, by name (code-unit order). */
  readonly definitions: CheckedDefinition[];
  /** The problems of files that did not load (the catalog tests keep this empty). */
  readonly diagnostics: Diagnostic[];
}

/** Reads and checks every definition file of a catalog directory; a missing directory throws. */
export async function readCatalog(dir: string): Promise<CatalogRead> {
  const files = (await listJsonFiles(dir)).filter((file) => !isGuidanceFile(file));
  const checked = await checkDefinitionFiles(new DocumentChecker(), files);
  const definitions = [...checked.definitions].sort((a, b) =>
    a.definition.name < b.definition.name ? -1 : a.definition.name > b.definition.name ? 1 : 0,
  );
  return {
    definitions,
    diagnostics: [...checked.diagnostics, ...checked.unreadable.map(readErrorDiagnostic)],
  };
}
