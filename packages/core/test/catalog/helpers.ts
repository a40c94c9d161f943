// Shared helpers for the bundled catalog's tests: loading the real tools/ files the way
// `--tools a,b` does, building a call's argv through the public API, and running calls for real
// in the Landlock sandbox (scopes under /var/tmp, as the engine tests do).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import {
  ArgumentValidator,
  loadTools,
  prepareInvocation,
  type ExecutionResult,
  type LoadedTool,
} from '../../src/index.js';
import { type LoadResult } from '../../src/definition/load.js';
import { engineFixture, type EngineFixture } from '../support/engine.js';

export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
export const CATALOG_DIR = join(REPO_ROOT, 'tools');
export const CATALOG_DOC = join(REPO_ROOT, 'docs', 'catalog.md');

/** Every bundled definition, by the name `--tools` takes (and its file's base name). */
export const CATALOG_NAMES = ['cargo', 'file-tools', 'gh', 'git', 'npm', 'pnpm', 'python'] as const;
export type CatalogName = (typeof CATALOG_NAMES)[number];

/** Loads bundled definitions exactly as `ahma-shell --tools a,b` does, with no local tools. */
export function loadCatalog(names: readonly string[] = CATALOG_NAMES): Promise<LoadResult> {
  return loadTools({
    // A local tools directory that does not exist: only the bundled files are loaded.
    toolsDir: { dir: join(CATALOG_DIR, '.no-local-tools'), origin: 'default' },
    catalogDir: CATALOG_DIR,
    bundled: names,
  });
}

/** The loaded catalog, failing the test on any diagnostic. */
export async function catalog(names: readonly string[] = CATALOG_NAMES): Promise<Catalog> {
  const result = await loadCatalog(names);
  expect(result.diagnostics).toEqual([]);
  return new Catalog(result);
}

export class Catalog {
  readonly #byName: ReadonlyMap<string, LoadedTool>;
  constructor(readonly result: LoadResult) {
    this.#byName = new Map(result.tools.map((tool) => [tool.name, tool]));
  }

  has(name: string): boolean {
    return this.#byName.has(name);
  }

  get tools(): readonly LoadedTool[] {
    return this.result.tools;
  }

  tool(name: string): LoadedTool {
    const found = this.#byName.get(name);
    if (found === undefined) throw new Error(`the catalog has no tool "${name}"`);
    return found;
  }
}

const validator = new ArgumentValidator();

/** Fails the test unless `args` satisfy the tool's inputSchema (what a client's call must do). */
export function expectValidCall(tool: LoadedTool, args: Record<string, unknown>): void {
  expect(
    validator.validate(tool.inputSchema, args),
    `${tool.name} ${JSON.stringify(args)}`,
  ).toEqual([]);
}

/** The problems the server would report for a call, as messages. */
export function callErrors(tool: LoadedTool, args: Record<string, unknown>): string[] {
  return validator.validate(tool.inputSchema, args).map((error) => error.message);
}

/**
 * The argv a call runs, as prepared by the server (paths resolved against `scope`). The temporary
 * file of a file_arg value appears as `@file:<its content>`, so the array is deterministic.
 */
export async function argvOf(
  tool: LoadedTool,
  args: Record<string, unknown>,
  scope: string,
): Promise<string[]> {
  expectValidCall(tool, args);
  const prepared = await prepareInvocation(tool.leaf, args, { scope });
  try {
    return prepared.argv.map((element) =>
      element.includes('ahma-args-') && existsSync(element)
        ? `@file:${readFileSync(element, 'utf8')}`
        : element,
    );
  } finally {
    await prepared.cleanup();
  }
}

export interface CallResult extends ExecutionResult {
  /** The argv as run (file_arg values appear as their temporary files' paths). */
  readonly argv: readonly string[];
}

/** Runs catalog tools for real, in the sandbox, in a fresh scope under /var/tmp. */
export interface CatalogRunner {
  readonly scope: string;
  readonly fixture: EngineFixture;
  call(name: string, args?: Record<string, unknown>): Promise<CallResult>;
  dispose(): Promise<void>;
}

export async function catalogRunner(
  loaded: Catalog,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<CatalogRunner> {
  const fixture = await engineFixture({ env });
  let count = 0;
  return {
    scope: fixture.scope,
    fixture,
    async call(name, args = {}) {
      const tool = loaded.tool(name);
      expectValidCall(tool, args);
      const prepared = await prepareInvocation(tool.leaf, args, { scope: fixture.scope });
      try {
        const result = await fixture.engine.executor.run({
          command: { kind: 'argv', argv: prepared.argv },
          cwd: prepared.cwd,
          // The call's timeout_seconds, else the tool's; tests pass short ones where a hang is the bug.
          timeoutMs: (prepared.timeoutSeconds ?? 120) * 1000,
          logName: `catalog-${String(process.pid)}-${String(++count)}`,
        });
        return { ...result, argv: prepared.argv };
      } finally {
        await prepared.cleanup();
      }
    },
    dispose: () => fixture.dispose(),
  };
}

/** Fails with the command's output unless it exited 0. */
export function expectSuccess(result: CallResult): string {
  expect(
    { exitCode: result.exitCode, status: result.status },
    `${result.argv.join(' ')}\n${result.output}`,
  ).toEqual({ exitCode: 0, status: 'completed' });
  return result.output;
}

/** Whether a program can be run here (tests of a missing CLI are skipped, not failed). */
export function installed(command: string, args: readonly string[] = ['--version']): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore', timeout: 20_000 });
    return true;
  } catch {
    return false;
  }
}
