// This package: who the server is, as it tells MCP clients and `--version`, and where its own files
// are. It sits at the top of src/ because src/*.ts and the bundled dist/*.js are at the same depth,
// so the paths below hold in the tests (src) and in the installed package (dist) alike.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import packageJson from '../package.json' with { type: 'json' };

export const SERVER_NAME = 'ahma';
export const SERVER_VERSION: string = packageJson.version;

/** This package's directory (the engine refuses to start where commands could write it, R7.6). */
export function packageDirectory(): string {
  return fileURLToPath(new URL('..', import.meta.url));
}

/** The operations page's files (HTML, CSS, JS), served as they are: `ops-page/` in this package. */
export function opsPageDirectory(): string {
  return fileURLToPath(new URL('../ops-page', import.meta.url));
}

/** The bundled catalog: `tools/` at the repository root. */
export function catalogDirectory(): string {
  return fileURLToPath(new URL('../../../tools', import.meta.url));
}

/** This package's `ahma-shell` program (bin/ahma-shell.js, which runs the built dist/cli.js). */
export function ahmaShellBin(): string {
  return join(packageDirectory(), 'bin', 'ahma-shell.js');
}
