// ahma-shell is started by every MCP client session, so its start-up time matters: its
// dependencies (the MCP SDK, @ahma/core, zod, ajv, pino) are bundled into one file, which Node
// loads in about 80 ms instead of about 200 ms for the hundreds of modules they are made of.
// pino-pretty stays a lazily imported package: only --log-to-stderr needs it.
import { dirname } from 'node:path';
import { defineConfig, type Options } from 'tsup';
import base from '../../tsup.bins.js';

type Plugin = NonNullable<Options['esbuildPlugins']>[number];

/**
 * zod's `z.locales` (and `z.core.locales`) holds the error messages of 48 languages (370 kB, an
 * eighth of what a start loaded). Nothing here sets a locale, and zod registers English itself
 * (classic/schemas.js), so the bundle's `z.locales` keeps English alone.
 */
const zodEnglishOnly: Plugin = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /\/zod\/v4\/(classic|core|mini)\/[^/]+\.js$/.test(args.importer)
        ? { path: args.importer, namespace: 'zod-english-only' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, (args) => ({
      contents: "export { default as en } from '../locales/en.js';",
      resolveDir: dirname(args.path),
      loader: 'js',
    }));
  },
};

export default defineConfig({
  ...base,
  // The bin shim imports dist/cli.js; the CLI's code lives in src/cli/.
  entry: { index: 'src/index.ts', cli: 'src/cli/main.ts' },
  noExternal: [/^(?!pino-pretty$)/],
  // Bundled CommonJS (ajv, pino) calls require() for Node's own modules.
  banner: {
    js: "import { createRequire as __ahmaCreateRequire } from 'node:module'; const require = __ahmaCreateRequire(import.meta.url);",
  },
  esbuildPlugins: [zodEnglishOnly],
  // jsonc-parser's `main` is a UMD build that requires files at run time; its ESM build bundles.
  esbuildOptions(options) {
    options.mainFields = ['module', 'main'];
  },
});
