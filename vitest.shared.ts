// The one vitest configuration every package uses. Each package's vitest.config.ts says which of
// its test files are which kind (`tests`), and `testConfig(tests)` turns that into vitest projects
// of the same names; vitest.unit.config.ts runs the unit project of every package at once.
import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

/**
 * Which of a package's test files are which kind: glob lists relative to the package. A file is
 * the first kind whose globs match it, in this order:
 *
 * - `sequential`: must have the machine to themselves — they attack the sandbox, count or signal
 *   processes, or measure time. One at a time, after all the others (inside one, a red-team file
 *   runs its root and its user attacks side by side: eachIdentity in red-team/harness.ts).
 *   SEQUENTIAL below holds for every package.
 * - `e2e`: the built package from outside — its binaries spawned, real MCP clients over stdio or
 *   HTTP, its dist.
 * - `unit`: start no process and open no server (pure functions, parsing, schemas, docs checks),
 *   so they need no build. vitest.unit-setup.ts fails a unit test that breaks the rule.
 *   `pnpm test:unit` runs only these, for the edit loop.
 * - `system`: every other file under test/ — real processes, the real sandbox, real servers,
 *   driven through the package's API. A new file is `system` until it is listed elsewhere.
 */
export interface TestKinds {
  readonly unit?: readonly string[];
  readonly e2e?: readonly string[];
  readonly sequential?: readonly string[];
}

/** Sequential files in any package (see TestKinds). */
const SEQUENTIAL = [
  'test/red-team/**/*.test.ts',
  'test/sandbox/red-team.test.ts',
  'test/sandbox/zygote-*.test.ts',
  'test/process/watchdog.test.ts',
];

const ALL = 'test/**/*.test.ts';

/**
 * unit, system and e2e files mostly wait — for a child process, a server, a socket — so several
 * run at once even on two cores (vitest's default is one worker per core, less one: a single
 * worker here). Projects that run together must share this number.
 */
const PARALLEL_WORKERS = 4;

/** Where the shared setup files are, from a package's directory. */
const FROM_PACKAGE = '../..';

/** What every project of a package needs, whichever run it is part of. */
const common = {
  // A fresh TMPDIR and state root per run (see vitest.global-setup.ts).
  globalSetup: [`${FROM_PACKAGE}/vitest.global-setup.ts`],
  setupFiles: [`${FROM_PACKAGE}/vitest.setup.ts`],
  testTimeout: 20_000,
};

/**
 * The unit project of a package: `root` is the package's directory when the project is run from
 * the repository's root (vitest.unit.config.ts), and `name` then says which package it is.
 */
export function unitProject(
  kinds: TestKinds,
  at: { root?: string; name?: string } = {},
): TestProjectInlineConfiguration | undefined {
  if (kinds.unit === undefined || kinds.unit.length === 0) return undefined;
  return {
    ...(at.root === undefined ? {} : { root: at.root }),
    test: {
      ...common,
      name: at.name ?? 'unit',
      include: [...kinds.unit],
      exclude: [...configDefaults.exclude, ...sequentialOf(kinds), ...(kinds.e2e ?? [])],
      setupFiles: [...common.setupFiles, `${FROM_PACKAGE}/vitest.unit-setup.ts`],
      // Unit files only compute: worker threads that keep their imports from file to file cost a
      // fraction of the CPU of a fresh process per file (about half of this project's time).
      pool: 'threads',
      isolate: false,
      maxWorkers: PARALLEL_WORKERS,
      sequence: { groupOrder: 0 },
    },
  };
}

/** A package's vitest config: one project per kind it has, the sequential one last. */
export function testConfig(kinds: TestKinds = {}) {
  const sequential = sequentialOf(kinds);
  const e2e = [...(kinds.e2e ?? [])];
  const unit = [...(kinds.unit ?? [])];
  // `isolate: false` (system): a worker keeps the modules it loaded from one file to the next
  // instead of loading them afresh for each — about a fifth of the system files' CPU on two cores
  // (shell-server's: 197 s -> 159 s, wall 106 s -> 87 s). Safe because no test file mocks modules,
  // stubs globals or changes the working directory; each builds its own runtimes and servers. e2e
  // files keep isolation: they drive binaries and want nothing carried over.
  const parallel = (name: string, include: string[], exclude: string[], isolate = true) => ({
    test: {
      ...common,
      name,
      include,
      exclude: [...configDefaults.exclude, ...exclude],
      maxWorkers: PARALLEL_WORKERS,
      isolate,
      sequence: { groupOrder: 0 },
    },
  });
  const projects = [
    unitProject(kinds),
    parallel('system', [ALL], [...sequential, ...e2e, ...unit], false),
    e2e.length === 0 ? undefined : parallel('e2e', e2e, sequential),
    {
      test: {
        ...common,
        name: 'sequential',
        include: sequential,
        maxWorkers: 1,
        fileParallelism: false,
        // One worker runs them all, one after another, keeping what it loaded: a fresh process
        // per file cost shell-server's 22 files about 6 s.
        isolate: false,
        sequence: { groupOrder: 1 },
      },
    },
  ].filter((project) => project !== undefined);
  return defineConfig({
    test: {
      // The JSON report feeds scripts/test-summary.mjs, which prints the suite's one-line total.
      reporters: ['default', 'json'],
      outputFile: { json: 'test-results.json' },
      projects,
    },
  });
}

function sequentialOf(kinds: TestKinds): string[] {
  return [...SEQUENTIAL, ...(kinds.sequential ?? [])];
}
