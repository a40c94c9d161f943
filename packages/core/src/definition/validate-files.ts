// Validation of named files and directories, for ahma-validate: every problem in every file, with
// each directory's definitions checked together (names, guidance keys, sequence steps).
import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { DocumentChecker } from './check-document.js';
import type { Diagnostic } from './diagnostic.js';
import { checkDefinitionSet } from './definition-set.js';
import { mergeGuidance, type GuidanceBlocks } from './guidance.js';
import {
  checkDefinitionFiles,
  checkGuidanceFile,
  isGuidanceFile,
  listJsonFiles,
  ToolFileReadError,
} from './tool-files.js';

export interface FileReport {
  readonly file: string;
  readonly diagnostics: readonly Diagnostic[];
}

export interface ValidationReport {
  /** One entry per validated file, in the order the targets named them. */
  readonly files: readonly FileReport[];
}

export interface ValidateFilesOptions {
  /** The directory relative targets are read from (default: the process's); names stay as given. */
  readonly cwd?: string;
}

/**
 * Validates files and directories (their `*.json` files). A named file is checked together with
 * its directory's other definitions, so sequence steps may call tools defined beside it; only the
 * named files are reported. Throws ToolFileReadError for a missing or unreadable target.
 */
export async function validateToolFiles(
  targets: readonly string[],
  { cwd }: ValidateFilesOptions = {},
): Promise<ValidationReport> {
  const targeted: string[] = [];
  for (const target of targets) {
    const info = await stat(cwd === undefined ? target : resolve(cwd, target)).catch(
      (error: unknown) => {
        throw new ToolFileReadError(target, error);
      },
    );
    if (info.isDirectory()) targeted.push(...(await listJsonFiles(target, cwd)));
    else targeted.push(target);
  }

  // ahma-validate also reports a tool whose input schema cannot be compiled (a server finds out
  // at the tool's first call).
  const checker = new DocumentChecker({ compileInputSchemas: true });
  const byFile = new Map<string, Diagnostic[]>(targeted.map((file) => [file, []]));
  for (const [dir, named] of groupByDirectory(targeted)) {
    const siblings = await listJsonFiles(dir, cwd);
    const namedResolved = new Set(named.map((file) => resolve(file)));
    // Report under the name the user gave; use sibling paths as listed for context files.
    const siblingSet = new Set(siblings.map((file) => resolve(file)));
    const files = [
      ...siblings.map(
        (sibling) => named.find((file) => resolve(file) === resolve(sibling)) ?? sibling,
      ),
      // A named file need not end in .json; it is still validated.
      ...named.filter((file) => !siblingSet.has(resolve(file))),
    ];
    const report = (diagnostics: readonly Diagnostic[]) => {
      for (const d of diagnostics)
        if (namedResolved.has(resolve(d.file))) byFile.get(d.file)?.push(d);
    };

    // A named file that cannot be read is an I/O error, not an invalid definition.
    const failOnNamed = (unreadable: readonly ToolFileReadError[]) => {
      const named = unreadable.find((error) => namedResolved.has(resolve(error.path)));
      if (named !== undefined) throw named;
    };

    const guidanceFile = files.find(isGuidanceFile);
    let guidanceBlocks: GuidanceBlocks | undefined;
    if (guidanceFile !== undefined) {
      const guidance = await checkGuidanceFile(checker, guidanceFile, cwd);
      failOnNamed(guidance.unreadable);
      report(guidance.diagnostics);
      guidanceBlocks = guidance.blocks;
    }

    const checked = await checkDefinitionFiles(
      checker,
      files.filter((file) => !isGuidanceFile(file)),
      cwd,
    );
    failOnNamed(checked.unreadable);
    report(checked.diagnostics);
    report(checkDefinitionSet(checked.definitions, mergeGuidance(guidanceBlocks)).diagnostics);
  }
  return { files: targeted.map((file) => ({ file, diagnostics: byFile.get(file) ?? [] })) };
}

function groupByDirectory(files: readonly string[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const file of files) {
    const dir = dirname(file);
    const key = resolve(dir);
    const group = groups.get(key) ?? [];
    group.push(file);
    groups.set(key, group);
  }
  // Keys are absolute; list each directory through the spelling of its first named file.
  return new Map([...groups.values()].map((group) => [dirname(group[0] ?? '.'), group]));
}
