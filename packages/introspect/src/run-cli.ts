// ahma-introspect PROGRAM [--depth N] [--out FILE] [--name NAME]: the tool file of a program from
// its --help, printed or written. Exit 0 written, 1 the program gave no help or the sandbox could
// not start, 2 usage.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { AhmaError } from '@ahma/core';
import { introspect } from './introspect.js';
import { HelpNotFound } from './run/walk.js';

export const USAGE = `Usage: ahma-introspect PROGRAM [--depth N] [--out FILE] [--name NAME]

Reads PROGRAM's --help (and each subcommand's), run in Ahma's sandbox with no network, and writes an
MTDF tool file: subcommands, options with their types, positionals.

  --depth N     levels of subcommands to read (default 2, 0 = the program's own help only)
  --out FILE    write the file there (default: print it); an existing file is not overwritten
  --name NAME   the tool file's name (default: the program's base name)
  -h, --help    show this help
`;

export interface Output {
  stdout(text: string): void;
  stderr(text: string): void;
}

export async function runIntrospect(
  argv: readonly string[],
  out: Output,
  cwd: string = process.cwd(),
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        depth: { type: 'string' },
        out: { type: 'string' },
        name: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    out.stderr(`ahma-introspect: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    out.stdout(USAGE);
    return 0;
  }
  const [program, ...extra] = positionals;
  if (program === undefined || extra.length > 0) {
    out.stderr(`ahma-introspect: name one program\n\n${USAGE}`);
    return 2;
  }
  const depth = values.depth === undefined ? 2 : Number(values.depth);
  if (!Number.isInteger(depth) || depth < 0 || depth > 5) {
    out.stderr(`ahma-introspect: --depth must be a whole number from 0 to 5\n`);
    return 2;
  }
  const target = values.out === undefined ? undefined : resolve(cwd, values.out);
  if (target !== undefined && existsSync(target)) {
    out.stderr(
      `ahma-introspect: ${target} exists; it is not overwritten (keeping your edits on a re-run is not done yet): choose another --out or remove it\n`,
    );
    return 2;
  }
  try {
    const result = await introspect(program, {
      depth,
      ...(values.name === undefined ? {} : { name: values.name }),
    });
    const text = `${JSON.stringify(result.definition, null, 2)}\n`;
    if (target === undefined) out.stdout(text);
    else await writeFile(target, text, { flag: 'wx' });
    for (const note of result.notes) out.stderr(`note: ${note}\n`);
    if (target !== undefined) out.stderr(`wrote ${target}\n`);
    return 0;
  } catch (error) {
    if (error instanceof HelpNotFound || error instanceof AhmaError) {
      out.stderr(`ahma-introspect: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
