// The library entry and the CLI entry the bin shim imports. No type declarations while the package
// is private (nothing consumes them, and they cost every `pnpm test` a type-check): they come back
// with `dts: { entry: 'src/index.ts' }` when it is published.
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/cli.ts'],
  format: ['esm'],
  target: 'node20',
  sourcemap: true,
  clean: true,
});
