// Reading a tools directory: which files are definitions, which is the guidance file, and turning
// them into checked definitions plus diagnostics. Shared by the loader and ahma-validate.
import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { DocumentChecker } from './check-document.js';
import { diagnostic, type Diagnostic } from './diagnostic.js';
import type { CheckedDefinition } from './definition-set.js';
import { GUIDANCE_FILE_NAME, type GuidanceBlocks } from './guidance.js';

/** Raised for a file or directory that cannot be read at all (as opposed to an invalid one). */
export class ToolFileReadError extends Error {
  readonly code = 'TOOL_FILE_UNREADABLE';
  constructor(
    readonly path: string,
    cause: unknown,
  ) {
    super(`cannot read ${path}: ${describeIoError(cause)}`, { cause });
  }
}

export function isGuidanceFile(file: string): boolean {
  return basename(file) === GUIDANCE_FILE_NAME;
}

/** The `*.json` files directly inside `dir`, sorted by name so loading order is deterministic. */
export async function listJsonFiles(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    throw new ToolFileReadError(dir, error);
  }
  return names
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => join(dir, name));
}

export async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new ToolFileReadError(file, error);
  }
}

export interface CheckedFiles {
  readonly definitions: CheckedDefinition[];
  readonly diagnostics: Diagnostic[];
}

/** Checks each definition file on its own; unreadable files become diagnostics, not exceptions. */
export async function checkDefinitionFiles(
  checker: DocumentChecker,
  files: readonly string[],
): Promise<CheckedFiles> {
  const texts = await Promise.all(files.map((file) => readForCheck(file)));
  const definitions: CheckedDefinition[] = [];
  const diagnostics: Diagnostic[] = [];
  files.forEach((file, index) => {
    const text = texts[index];
    if (typeof text !== 'string') {
      diagnostics.push(text ?? diagnostic(file, '', 'cannot read'));
      return;
    }
    const result = checker.checkDefinition(file, text);
    if (result.ok) definitions.push({ file, definition: result.definition, leaves: result.leaves });
    else diagnostics.push(...result.diagnostics);
  });
  return { definitions, diagnostics };
}

/** Reads and checks a guidance file; undefined blocks when it is absent or invalid. */
export async function checkGuidanceFile(
  checker: DocumentChecker,
  file: string,
): Promise<{ blocks: GuidanceBlocks | undefined; diagnostics: Diagnostic[] }> {
  const text = await readForCheck(file);
  if (typeof text !== 'string') return { blocks: undefined, diagnostics: [text] };
  const result = checker.checkGuidance(file, text);
  return result.ok
    ? { blocks: result.guidance.guidance_blocks, diagnostics: [] }
    : { blocks: undefined, diagnostics: [...result.diagnostics] };
}

async function readForCheck(file: string): Promise<string | Diagnostic> {
  try {
    return await readText(file);
  } catch (error) {
    return diagnostic(file, '', error instanceof Error ? error.message : String(error));
  }
}

function describeIoError(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOTDIR':
      return 'not a directory';
    case 'EISDIR':
      return 'is a directory';
    default:
      return error instanceof Error ? error.message : String(error);
  }
}
