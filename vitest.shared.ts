// The one vitest configuration every package uses (each package's vitest.config.ts re-exports it).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A fresh TMPDIR and state root per run (see vitest.global-setup.ts).
    globalSetup: ['../../vitest.global-setup.ts'],
    setupFiles: ['../../vitest.setup.ts'],
    // The JSON report feeds scripts/test-summary.mjs, which prints the suite's one-line total.
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results.json' },
    testTimeout: 20_000,
  },
});
