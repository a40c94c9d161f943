// Reading a tools directory: which files are definitions, which is the guidance file, and turning
// them into checked definitions plus diagnostics. Shared by the loader and ahma-validate.
import { readdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { AhmaError } from '../errors.js';
import { readRegularFile } from '../paths/read-regular.js';
import type { DocumentChecker } from './check-document.js';
import { diagnostic, type Diagnostic } from './diagnostic.js';
import type { CheckedDefinition } from './definition-set.js';
import { GUIDANCE_FILE_NAME, type GuidanceBlocks } from './guidance.js';

/** Raised for a file or directory that cannot be read at all (as opposed to an invalid one). */
export class ToolFileReadError extends AhmaError {
  constructor(
    readonly path: string,
    cause: unknown,
  ) {
    super('TOOL_FILE_UNREADABLE', `cannot read ${path}: ${describeIoError(cause)}`, { cause });
    this.name = 'ToolFileReadError';
  }
}

export function isGuidanceFile(file: string): boolean {
  return basename(file) === GUIDANCE_FILE_NAME;
}

/** A path as given, read relative to `cwd` when one is given (messages keep the name as given). */
function inCwd(path: string, cwd: string | undefined): string {
  return cwd === undefined ? path : resolve(cwd, path);
}

/** The `*.json` files directly inside `dir`, sorted by name so loading order is deterministic. */
export async function listJsonFiles(dir: string, cwd?: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(inCwd(dir, cwd));
  } catch (error) {
    throw new ToolFileReadError(dir, error);
  }
  return names
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => join(dir, name));
}

/** A tool file larger than this is not one. */
const MAX_TOOL_FILE_BYTES = 8 * 1024 * 1024;

/**
 * A tool file's text. The tools directory is in the scope, where commands write: a "file" there
 * may be a link to a device or a FIFO, which the unconfined server must never open (R7.6).
 */
export async function readText(file: string, cwd?: string): Promise<string> {
  try {
    return await readRegularFile(inCwd(file, cwd), MAX_TOOL_FILE_BYTES);
  } catch (error) {
    throw new ToolFileReadError(file, error);
  }
}

export interface CheckedFiles {
  readonly definitions: CheckedDefinition[];
  /** Problems in files that could be read: every error and warning (a warned file still loads). */
  readonly diagnostics: Diagnostic[];
  /** Files that could not be read at all; the caller decides whether that is fatal. */
  readonly unreadable: ToolFileReadError[];
}

/** Checks each definition file on its own. */
export async function checkDefinitionFiles(
  checker: DocumentChecker,
  files: readonly string[],
  cwd?: string,
): Promise<CheckedFiles> {
  const texts = await Promise.all(
    files.map((file) => readText(file, cwd).catch((error: unknown) => error)),
  );
  const result: CheckedFiles = { definitions: [], diagnostics: [], unreadable: [] };
  files.forEach((file, index) => {
    const text = texts[index];
    if (typeof text !== 'string') {
      result.unreadable.push(asReadError(file, text));
      return;
    }
    const checked = checker.checkDefinition(file, text);
    if (checked.ok) {
      result.definitions.push({ file, definition: checked.definition, leaves: checked.leaves });
      result.diagnostics.push(...checked.warnings);
    } else {
      result.diagnostics.push(...checked.diagnostics);
    }
  });
  return result;
}

export interface CheckedGuidance {
  /** The file's blocks; undefined when it is invalid or unreadable. */
  readonly blocks: GuidanceBlocks | undefined;
  readonly diagnostics: Diagnostic[];
  readonly unreadable: ToolFileReadError[];
}

export async function checkGuidanceFile(
  checker: DocumentChecker,
  file: string,
  cwd?: string,
): Promise<CheckedGuidance> {
  const text = await readText(file, cwd).catch((error: unknown) => error);
  if (typeof text !== 'string') {
    return { blocks: undefined, diagnostics: [], unreadable: [asReadError(file, text)] };
  }
  const checked = checker.checkGuidance(file, text);
  return checked.ok
    ? { blocks: checked.guidance.guidance_blocks, diagnostics: [], unreadable: [] }
    : { blocks: undefined, diagnostics: [...checked.diagnostics], unreadable: [] };
}

/** An unreadable file as a diagnostic, for callers (the server) that carry on without it. */
export function readErrorDiagnostic(error: ToolFileReadError): Diagnostic {
  return diagnostic(error.path, '', error.message);
}

function asReadError(file: string, error: unknown): ToolFileReadError {
  return error instanceof ToolFileReadError ? error : new ToolFileReadError(file, error);
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
