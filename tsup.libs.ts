// The one tsup configuration of the library packages (no bin): one entry, with types. Each such
// package's tsup.config.ts re-exports it.
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  target: 'node20',
  dts: true,
  sourcemap: true,
  clean: true,
});
