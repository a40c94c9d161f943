// The one tsup configuration of the packages that ship a bin: a library entry and the CLI entry the
// bin shim imports. Each such package's tsup.config.ts re-exports it. The library's type
// declarations are a task of their own (`build:types`, turbo.json): nothing the tests run needs
// them, so the tests start without waiting for them.
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/cli.ts'],
  format: ['esm'],
  target: 'node20',
  sourcemap: true,
  clean: true,
});
