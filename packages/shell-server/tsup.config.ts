// ahma-shell is started by every MCP client session, so its start-up time matters: its
// dependencies (the MCP SDK, @ahma/core, zod, ajv, pino) are bundled into one file, which Node
// loads in about 80 ms instead of about 200 ms for the hundreds of modules they are made of.
// pino-pretty stays a lazily imported package: only --log-to-stderr needs it.
import { defineConfig } from 'tsup';
import base from '../../tsup.bins.js';

export default defineConfig({
  ...base,
  // The bin shim imports dist/cli.js; the CLI's code lives in src/cli/.
  entry: { index: 'src/index.ts', cli: 'src/cli/main.ts' },
  noExternal: [/^(?!pino-pretty$)/],
  // Bundled CommonJS (ajv, pino) calls require() for Node's own modules.
  banner: {
    js: "import { createRequire as __ahmaCreateRequire } from 'node:module'; const require = __ahmaCreateRequire(import.meta.url);",
  },
  // jsonc-parser's `main` is a UMD build that requires files at run time; its ESM build bundles.
  esbuildOptions(options) {
    options.mainFields = ['module', 'main'];
  },
});
