// The live run (SPEC §15, docs/introspection.md "Measured live"): the built ahma-introspect on the
// programs installed here, each file validated and measured. Not part of `pnpm test` (it takes a
// minute or two and depends on what is installed): `pnpm --filter @ahma/introspect run test:live`,
// which .ci/run runs through scripts/live.sh after fetching the programs a fresh machine lacks.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/live/**/*.live.ts'],
    // A fresh TMPDIR and state root, as for every other run (see vitest.global-setup.ts).
    globalSetup: ['../../vitest.global-setup.ts'],
    testTimeout: 170_000,
    // Two programs read at a time: two cores, and each help run mostly waits for its process.
    maxConcurrency: 2,
    reporters: ['default'],
  },
});
