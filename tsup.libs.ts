// The one tsup configuration of the library packages (no bin): one entry. Each such package's
// tsup.config.ts re-exports it. Its type declarations are a task of their own (`build:types`,
// turbo.json), so the packages built from this one do not wait for them.
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  target: 'node20',
  sourcemap: true,
  clean: true,
});
