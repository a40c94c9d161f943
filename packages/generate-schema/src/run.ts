// generate-tool-schema [OUT_DIR] [--stdout]: writes the MTDF JSON Schema (draft 2020-12), generated
// from core's zod source, as OUT_DIR/mtdf-schema.json (default docs/), with the schema of
// tool_guidance.json beside it.
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { mtdfJsonSchema, renderJsonSchema, toolGuidanceJsonSchema } from '@ahma/core';
import packageJson from '../package.json' with { type: 'json' };

/** Where the command writes; injected so tests can capture it. */
export interface Output {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** What the command would take from its process; injected so tests can run it in-process. */
export interface RunOptions extends Output {
  /** A relative OUT_DIR (and the default, docs) is in it (default: the process's). */
  readonly cwd?: string | undefined;
}

const USAGE = `Usage: generate-tool-schema [OUT_DIR] [--stdout]

Writes OUT_DIR/mtdf-schema.json (default OUT_DIR: docs), the JSON Schema of Ahma tool definition
files, and OUT_DIR/tool-guidance-schema.json. Point a tool file's "$schema" at it for editor support.

Options:
  --stdout       print mtdf-schema.json to standard output instead of writing files
  -h, --help     show this help
  -v, --version  show the version
`;

/** The files this command writes, by name, with their exact contents. */
export function schemaFiles(): Record<string, string> {
  return {
    'mtdf-schema.json': renderJsonSchema(mtdfJsonSchema()),
    'tool-guidance-schema.json': renderJsonSchema(toolGuidanceJsonSchema()),
  };
}

export async function runGenerateSchema(
  argv: readonly string[],
  options: RunOptions,
): Promise<number> {
  const output: Output = options;
  const { cwd } = options;
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        stdout: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (error) {
    output.stderr(
      `generate-tool-schema: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`,
    );
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    output.stdout(USAGE);
    return 0;
  }
  if (values.version === true) {
    output.stdout(`${packageJson.version}\n`);
    return 0;
  }
  if (positionals.length > 1) {
    output.stderr(`generate-tool-schema: expected at most one OUT_DIR\n\n${USAGE}`);
    return 2;
  }
  const files = schemaFiles();
  if (values.stdout === true) {
    output.stdout(files['mtdf-schema.json'] ?? '');
    return 0;
  }
  const outDir = positionals[0] ?? 'docs';
  // Written in `cwd`, reported as given.
  const at = (path: string) => (cwd === undefined ? path : resolve(cwd, path));
  try {
    await mkdir(at(outDir), { recursive: true });
    for (const [name, text] of Object.entries(files)) {
      const path = join(outDir, name);
      await writeFile(at(path), text);
      output.stdout(`wrote ${path}\n`);
    }
  } catch (error) {
    output.stderr(
      `generate-tool-schema: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 2;
  }
  return 0;
}
