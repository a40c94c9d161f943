// Loading the tools a server offers (R1.2, R5.2): the local tools directory plus selected bundled
// catalog definitions. Invalid files are rejected one by one with diagnostics; the rest load.
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { DocumentChecker } from './check-document.js';
import { diagnostic, type Diagnostic } from './diagnostic.js';
import { checkDefinitionSet, type CheckedDefinition } from './definition-set.js';
import { describeLeaf, type ToolLeaf } from './flatten.js';
import { mergeGuidance, type GuidanceBlocks } from './guidance.js';
import { leafInputSchema } from './input-schema.js';
import type { JsonSchema } from './json-schema.js';
import {
  checkDefinitionFiles,
  checkGuidanceFile,
  isGuidanceFile,
  listJsonFiles,
  readErrorDiagnostic,
} from './tool-files.js';

/** Environment variable naming the tools directory when no option does. */
export const TOOLS_DIR_ENV = 'AHMA_TOOLS_DIR';

export interface ToolsDirSource {
  /** `--tools-dir`, when given. */
  readonly toolsDir?: string | undefined;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The sandbox scope; the default tools directory is `<scope>/.ahma/tools`. */
  readonly scope: string;
}

export interface ResolvedToolsDir {
  readonly dir: string;
  /** Where the choice came from; an explicitly named directory must exist. */
  readonly origin: 'option' | 'env' | 'default';
}

/** R1.2: `--tools-dir`, else `AHMA_TOOLS_DIR`, else `<scope>/.ahma/tools`. */
export function resolveToolsDir(source: ToolsDirSource): ResolvedToolsDir {
  if (source.toolsDir !== undefined && source.toolsDir !== '') {
    return { dir: resolve(source.toolsDir), origin: 'option' };
  }
  const fromEnv = source.env?.[TOOLS_DIR_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return { dir: resolve(fromEnv), origin: 'env' };
  return { dir: join(resolve(source.scope), '.ahma', 'tools'), origin: 'default' };
}

/** One MCP tool ready to list: its leaf, the agent-facing description and its inputSchema. */
export interface LoadedTool {
  readonly name: string;
  readonly file: string;
  readonly leaf: ToolLeaf;
  readonly description: string;
  readonly inputSchema: JsonSchema;
}

export interface LoadOptions {
  readonly toolsDir: ResolvedToolsDir;
  /** Directory of the bundled catalog (`tools/` in this repository). */
  readonly catalogDir?: string | undefined;
  /** Names of bundled definitions to enable (`--tools a,b`). */
  readonly bundled?: readonly string[];
  /**
   * The definitions of the previous load (hot reload): a tools-directory file that no longer
   * passes its own checks keeps its last good definition instead of disappearing.
   */
  readonly lastGood?: readonly CheckedDefinition[];
  /** The guidance of the previous load: kept while the tools directory's guidance file is broken. */
  readonly lastGoodGuidance?: GuidanceBlocks;
}

export interface LoadResult {
  /** Deterministic order: by definition name, then leaves in declared order. */
  readonly tools: LoadedTool[];
  readonly definitions: CheckedDefinition[];
  readonly guidance: GuidanceBlocks;
  /** Every rejected file's errors and every loaded file's warnings; logging them is the caller's job. */
  readonly diagnostics: Diagnostic[];
  /** Files rejected now whose last good definition (see `lastGood`) is served instead. */
  readonly keptLastGood: string[];
}

export async function loadTools(options: LoadOptions): Promise<LoadResult> {
  const checker = new DocumentChecker();
  const diagnostics: Diagnostic[] = [];

  const local = await readSource(
    checker,
    options.toolsDir.dir,
    options.toolsDir.origin !== 'default',
    diagnostics,
  );
  const keptLastGood: string[] = [];
  for (const previous of options.lastGood ?? []) {
    if (local.rejected.includes(previous.file)) {
      local.definitions.push(previous);
      keptLastGood.push(previous.file);
    }
  }
  const bundledNames = options.bundled ?? [];
  let bundled: Source = {
    definitions: [],
    guidance: undefined,
    guidanceFile: undefined,
    rejected: [],
  };
  if (bundledNames.length > 0) {
    if (options.catalogDir === undefined) {
      diagnostics.push(
        diagnostic('--tools', '', 'bundled tools were requested but no catalog directory is known'),
      );
    } else {
      bundled = await readSource(checker, options.catalogDir, true, diagnostics);
      bundled = {
        ...bundled,
        definitions: selectBundled(
          bundled.definitions,
          bundledNames,
          options.catalogDir,
          diagnostics,
        ),
      };
    }
  }

  // A local file with the same name overrides the bundled definition.
  const localNames = new Set(local.definitions.map((entry) => entry.definition.name));
  const candidates = [
    ...local.definitions,
    ...bundled.definitions.filter((entry) => !localNames.has(entry.definition.name)),
  ];
  // A guidance file that an edit broke keeps its last good blocks, like a definition file.
  let localGuidance = local.guidance;
  const brokenGuidance = local.guidance === undefined ? local.guidanceFile : undefined;
  if (brokenGuidance !== undefined && options.lastGoodGuidance !== undefined) {
    localGuidance = options.lastGoodGuidance;
    keptLastGood.push(brokenGuidance);
  }
  const guidance = mergeGuidance({ ...bundled.guidance, ...localGuidance });
  const set = checkDefinitionSet(candidates, guidance);
  diagnostics.push(...set.diagnostics);

  const definitions = [...set.accepted].sort((a, b) =>
    compare(a.definition.name, b.definition.name),
  );
  const tools = definitions.flatMap((entry) =>
    entry.leaves
      .filter((leaf) => leaf.enabled)
      .map((leaf) => ({
        name: leaf.name,
        file: entry.file,
        leaf,
        description: describeLeaf(leaf, guidance),
        inputSchema: leafInputSchema(leaf),
      })),
  );
  return { tools, definitions, guidance, diagnostics, keptLastGood };
}

interface Source {
  readonly definitions: CheckedDefinition[];
  readonly guidance: GuidanceBlocks | undefined;
  /** The guidance file, if there is one (its blocks are undefined when it is invalid). */
  readonly guidanceFile: string | undefined;
  /** Definition files that exist but failed their own checks or could not be read. */
  readonly rejected: string[];
}

async function readSource(
  checker: DocumentChecker,
  dir: string,
  mustExist: boolean,
  diagnostics: Diagnostic[],
): Promise<Source> {
  const exists = await stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!exists) {
    if (mustExist) {
      diagnostics.push(
        diagnostic(
          dir,
          '',
          'tools directory does not exist',
          'create it or point --tools-dir / AHMA_TOOLS_DIR elsewhere',
        ),
      );
    }
    return { definitions: [], guidance: undefined, guidanceFile: undefined, rejected: [] };
  }
  const files = await listJsonFiles(dir);
  const checked = await checkDefinitionFiles(
    checker,
    files.filter((file) => !isGuidanceFile(file)),
  );
  diagnostics.push(...checked.diagnostics, ...checked.unreadable.map(readErrorDiagnostic));
  const guidanceFile = files.find(isGuidanceFile);
  let guidance: GuidanceBlocks | undefined;
  if (guidanceFile !== undefined) {
    const result = await checkGuidanceFile(checker, guidanceFile);
    diagnostics.push(...result.diagnostics, ...result.unreadable.map(readErrorDiagnostic));
    guidance = result.blocks;
  }
  const accepted = new Set(checked.definitions.map((entry) => entry.file));
  const rejected = files.filter((file) => !isGuidanceFile(file) && !accepted.has(file));
  return { definitions: checked.definitions, guidance, guidanceFile, rejected };
}

function selectBundled(
  available: readonly CheckedDefinition[],
  names: readonly string[],
  catalogDir: string,
  diagnostics: Diagnostic[],
): CheckedDefinition[] {
  const byName = new Map(available.map((entry) => [entry.definition.name, entry]));
  const selected: CheckedDefinition[] = [];
  for (const name of new Set(names)) {
    const entry = byName.get(name);
    if (entry === undefined) {
      diagnostics.push(
        diagnostic(
          join(catalogDir, `${name}.json`),
          '',
          `no bundled tool named "${name}"`,
          `bundled tools: ${[...byName.keys()].sort().join(', ') || 'none'}`,
        ),
      );
    } else {
      selected.push(entry);
    }
  }
  return selected;
}

/** Plain code-unit order, independent of the machine's locale. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
