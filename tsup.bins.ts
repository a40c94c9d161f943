// The one tsup configuration of the packages that ship a bin: a library entry (with types) and the
// CLI entry the bin shim imports. Each such package's tsup.config.ts re-exports it.
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/cli.ts'],
  format: ['esm'],
  target: 'node20',
  dts: { entry: 'src/index.ts' },
  sourcemap: true,
  clean: true,
});
