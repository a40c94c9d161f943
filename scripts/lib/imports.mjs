// What a package's TypeScript sources import, for the lint scripts that check the import graph
// (check-import-cycles.mjs, check-layers.mjs).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** Every .ts file below `dir`. */
export function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

// `from '…'` in import and export statements, bare `import '…'`, and `import('…')`.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g;

/**
 * The imports of `file`: relative ones resolved to the .ts files they name (`files`), the others
 * as written (`packages`: `node:fs`, `@modelcontextprotocol/sdk/…`).
 */
export function importsOf(file) {
  const text = readFileSync(file, 'utf8');
  const files = [];
  const packages = [];
  for (const [, specifier] of text.matchAll(SPECIFIER)) {
    if (specifier.startsWith('./') || specifier.startsWith('../')) {
      files.push(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
    } else {
      packages.push(specifier);
    }
  }
  return { files, packages };
}
