// ahma-introspect PROGRAM [--depth N] [--out FILE] [--name NAME] [--allow-read PATH,…]: the tool
// file of a program from its --help, printed or written; written again, merged with the person's
// edits (mtdf/merge.ts).
// Exit 0 written, 1 no help, no sandbox, or a merge that would not validate, 2 usage.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { AhmaError, DocumentChecker, writeFileAtomicAt } from '@ahma/core';
import { introspect } from './introspect.js';
import { mergeDiscovered } from './mtdf/merge.js';
import { HelpNotFound } from './run/walk.js';

export const USAGE = `Usage: ahma-introspect PROGRAM [--depth N] [--out FILE] [--name NAME] [--allow-read PATH,…]

Reads PROGRAM's --help (and each subcommand's), run in Ahma's sandbox with no network, and writes an
MTDF tool file: subcommands, options with their types, positionals.

  --depth N     levels of subcommands to read (default 2, 0 = the program's own help only)
  --out FILE    write the file there (default: print it); run again, it keeps your edits: what
                was discovered is kept beside it as FILE.discovered, the base of the merge
  --name NAME   the tool file's name (default: the program's base name)
  --allow-read PATH,…
                let the help command also read these absolute paths (a program whose
                libraries or data lie where commands read nothing)
  -h, --help    show this help
`;

/** A tool file as written: two-space indents, a final newline. */
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

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
        'allow-read': { type: 'string', multiple: true },
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
  const readable = (values['allow-read'] ?? []).flatMap((list) =>
    list.split(',').filter((path) => path !== ''),
  );
  const relative = readable.find((path) => !isAbsolute(path));
  if (relative !== undefined) {
    out.stderr(`ahma-introspect: --allow-read ${relative}: a path must be absolute\n`);
    return 2;
  }
  const target = values.out === undefined ? undefined : resolve(cwd, values.out);
  const base = target === undefined ? undefined : discoveredBeside(target);
  if (target !== undefined && base !== undefined && existsSync(target) && !existsSync(base)) {
    out.stderr(
      `ahma-introspect: ${target} exists, and no ${basename(base)} beside it says what was discovered, so your edits cannot be told apart: choose another --out or remove it\n`,
    );
    return 2;
  }
  try {
    const result = await introspect(program, {
      depth,
      readable,
      ...(values.name === undefined ? {} : { name: values.name }),
    });
    for (const note of result.notes) out.stderr(`note: ${note}\n`);
    if (target === undefined || base === undefined) {
      out.stdout(json(result.definition));
      return 0;
    }
    let written = result.definition;
    if (existsSync(target)) {
      const merged = mergeDiscovered(
        await readJson(base),
        await readJson(target),
        result.definition,
      );
      const check = new DocumentChecker({ compileInputSchemas: true }).checkDefinition(
        target,
        JSON.stringify(merged.definition),
      );
      if (!check.ok) {
        out.stderr(
          `ahma-introspect: merged with your edits, ${target} would not validate; it is left as it is:\n` +
            check.diagnostics.map((d) => `  ${d.pointer || '/'}: ${d.message}\n`).join(''),
        );
        return 1;
      }
      written = merged.definition;
      for (const name of merged.report.added) out.stderr(`added: ${name}\n`);
      for (const name of merged.report.removed)
        out.stderr(`removed (no longer in its help): ${name}\n`);
      for (const name of merged.report.keptEdited) {
        out.stderr(`kept (no longer in its help, but you changed it): ${name}\n`);
      }
    }
    await writeFileAtomicAt(target, json(written));
    await writeFileAtomicAt(base, json(result.definition));
    out.stderr(`wrote ${target}\n`);
    return 0;
  } catch (error) {
    if (error instanceof HelpNotFound || error instanceof AhmaError) {
      out.stderr(`ahma-introspect: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

/**
 * What was discovered last, beside the tool file: not `*.json`, so the server never loads it as a
 * tool file of its own.
 */
function discoveredBeside(file: string): string {
  return join(dirname(file), `${basename(file)}.discovered`);
}

async function readJson(path: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
}
