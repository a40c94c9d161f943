// The one vitest configuration every package uses (each package's vitest.config.ts re-exports it).
import { defineConfig } from 'vitest/config';

/**
 * Files that must have the machine to themselves: they attack the sandbox, or count and signal
 * processes, or measure how long something takes. They run one at a time, after the others.
 */
const SEQUENTIAL = [
  'test/red-team/**/*.test.ts',
  'test/sandbox/red-team.test.ts',
  'test/sandbox/zygote-*.test.ts',
  'test/process/watchdog.test.ts',
];

/**
 * The other files mostly wait — for a child process, a server, a socket — so several run at once
 * even on two cores (vitest's default is one worker per core, less one: a single worker here).
 */
const PARALLEL_WORKERS = 4;

export default defineConfig({
  test: {
    // A fresh TMPDIR and state root per run (see vitest.global-setup.ts).
    globalSetup: ['../../vitest.global-setup.ts'],
    setupFiles: ['../../vitest.setup.ts'],
    // The JSON report feeds scripts/test-summary.mjs, which prints the suite's one-line total.
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results.json' },
    testTimeout: 20_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'parallel',
          include: ['test/**/*.test.ts'],
          exclude: SEQUENTIAL,
          maxWorkers: PARALLEL_WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'sequential',
          include: SEQUENTIAL,
          maxWorkers: 1,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
