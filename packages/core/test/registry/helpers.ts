// Shared helpers for the registry tests: real scopes in fresh temp directories, real executables in
// them, registries over real files, and child node processes that use the built Registry (the
// package's dist/) to change the same file from another process.
import { spawn, spawnSync } from 'node:child_process';
import {
  chmod,
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  realpath,
  rm,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, expect } from 'vitest';
import { AhmaError, type AhmaErrorCode } from '../../src/errors.js';
import { Registry } from '../../src/registry/registry.js';
import { realpathLenient } from '../../src/argv/paths.js';
import type { DraftRules } from '../../src/registry/draft.js';
import { withFileLock as withFileLockIn } from '../../src/registry/file-lock.js';
import type { PinnedDirectory } from '../../src/registry/pinned-directory.js';
import { withPinnedDirectory } from '../../src/registry/pinned-directory.js';
import { readRegistryFile as readRegistryFileIn } from '../../src/registry/registry-file.js';
import {
  removeStaleTemporaries as removeStaleTemporariesIn,
  writeFileAtomic as writeFileAtomicIn,
} from '../../src/registry/write-atomic.js';

export const INSTANT_MCP = fileURLToPath(new URL('../fixtures/instant-mcp/', import.meta.url));
/** The two commands of instant-mcp's state.json fixture, as the registry reads them. */
export const INSTANT_MCP_STATE = {
  count_lines: {
    name: 'count_lines',
    exec: 'wc',
    args: {
      file: { type: 'string', description: 'File to count', required: true },
      mode: { type: 'string', description: 'wc flag such as -l' },
    },
    description: 'Count lines, words and bytes',
    timeout: '30s',
  },
  greet: {
    name: 'greet',
    exec: './scripts/greet.sh',
    args: { name: { type: 'string', description: 'Name to greet', required: true } },
    description: 'Greet someone',
    async: true,
    timeout: '120s',
  },
} as const;
/** The built package: what child processes import (run `pnpm build` after changing src/). */
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
export const DIST_INDEX = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

/**
 * One test file's directories: a root made before its tests and removed after them, and a fresh
 * directory or scope (holding an executable ./tool.sh) per test.
 */
export function caseDirs(label: string) {
  let root = '';
  let counter = 0;
  beforeAll(async () => {
    root = await tempDir(label);
  });
  afterAll(() => removeDir(root));
  return {
    root: (): string => root,
    async dir(): Promise<string> {
      const path = join(root, `case-${String(++counter)}`);
      await mkdir(path);
      return path;
    },
    async scope(): Promise<string> {
      const scope = join(root, `scope-${String(++counter)}`);
      await writeExecutable(join(scope, 'tool.sh'));
      return scope;
    },
  };
}

/** A command of ./tool.sh, as the agent would give it. */
export const toolCommand = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  exec: './tool.sh',
  description: `the ${name} command`,
  ...extra,
});

/** A fresh directory (its real path) under the test run's temp directory. */
export async function tempDir(label: string): Promise<string> {
  return realpath(await mkdtemp(join(tmpdir(), `ahma-reg-${label}-`)));
}

export async function removeDir(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true });
}

/** Writes an executable shell script (`#!/bin/sh` + body), creating its directory. */
export async function writeExecutable(path: string, body = 'printf "%s\\n" "$@"'): Promise<string> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

/** Rules with nothing outside the registry and PATH as the test process has it. */
export function rules(scope: string, overrides: Partial<DraftRules> = {}): DraftRules {
  return {
    nameTaken: () => undefined,
    lookup: { scope, path: process.env['PATH'] },
    ...overrides,
  };
}

/** The registry file's default place in a scope. */
export const registryFile = (scope: string): string => join(scope, '.ahma', 'registry.json');

export function openRegistry(
  scope: string,
  file = registryFile(scope),
  overrides: Partial<DraftRules> = {},
): Promise<Registry> {
  return Registry.open({ file, writable: [scope], ...rules(scope, overrides) });
}

export { refusal } from '../support/refusal.js';

/** The AhmaError a function throws synchronously, checked for its code. */
export function thrown(work: () => unknown, code: AhmaErrorCode): AhmaError {
  let error: unknown;
  try {
    work();
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(AhmaError);
  const ahma = error as AhmaError;
  expect(ahma.code, ahma.message).toBe(code);
  return ahma;
}

/** The pid of a process that has exited (and been reaped): nothing answers to it now. */
export function deadPid(): number {
  const child = spawnSync('true');
  expect(child.status).toBe(0);
  return child.pid;
}

export interface ChildResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Child {
  readonly pid: number;
  readonly done: Promise<ChildResult>;
  kill(signal?: NodeJS.Signals): void;
}

/** A node process running `script` as an ES module. */
export function startNode(script: string): Child {
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const done = new Promise<ChildResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('the child process did not start');
  return { pid, done, kill: (signal = 'SIGTERM') => child.kill(signal) };
}

/**
 * A node process running `body` as an ES module, with `Registry` imported from the built package
 * and `open(file, scope)` opening a registry the way the tests do.
 */
export function startChild(body: string): Child {
  return startNode(
    [
      `import { Registry } from ${JSON.stringify(pathToFileURL(DIST_INDEX).href)};`,
      'const open = (file, scope) => Registry.open({ file, writable: [scope], lookup: { scope, path: process.env.PATH }, nameTaken: () => undefined });',
      body,
    ].join('\n'),
  );
}

/**
 * Source modules of src/ (paths relative to it) transpiled to JavaScript under `dir`, laid out as
 * in src/, for a child process to import: the code under test itself, not the build. They may
 * import only each other and node: modules. Returns each module's URL.
 */
export async function transpiledSources(
  dir: string,
  modules: readonly string[],
): Promise<Record<string, string>> {
  await writeFile(join(dir, 'package.json'), '{"type": "module"}\n');
  const urls: Record<string, string> = {};
  for (const module of modules) {
    const source = await readFile(join(SRC, module), 'utf8');
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
    });
    const file = join(dir, module.replace(/\.ts$/, '.js'));
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, outputText);
    urls[module] = pathToFileURL(file).href;
  }
  return urls;
}

/** Runs a child to its end and expects it to succeed; returns its stdout. */
export async function runChild(body: string): Promise<string> {
  const result = await startChild(body).done;
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

/** The names in a directory that start with `prefix`. */
export async function namesStartingWith(dir: string, prefix: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.startsWith(prefix)).sort();
}

/**
 * The registry's file primitives work in a pinned directory (pinned-directory.ts); these take a
 * plain path, pinning its directory for the one call, as the registry does for each change.
 */
export const atPath = {
  lock: <T>(path: string, work: () => Promise<T>, timeoutMs?: number): Promise<T> =>
    pinnedFor(path, (dir, name) => withFileLockIn(dir, name, work, timeoutMs)),
  write: (path: string, text: string): Promise<void> =>
    pinnedFor(path, (dir, name) => writeFileAtomicIn(dir, name, text)),
  removeStale: (path: string): Promise<void> =>
    pinnedFor(path, (dir, name) => removeStaleTemporariesIn(dir, name)),
  read: (path: string, now?: Date) =>
    pinnedFor(path, (dir, name) => readRegistryFileIn(dir, name, now === undefined ? {} : { now })),
};

async function pinnedFor<T>(
  path: string,
  work: (dir: PinnedDirectory, name: string) => Promise<T>,
): Promise<T> {
  return withPinnedDirectory(await realpathLenient(dirname(path)), (dir) =>
    work(dir, basename(path)),
  );
}

/** The same adapter for a child process, over the transpiled modules (their URLs). */
export function atPathSource(urls: { pinned: string; lock?: string; write?: string }): string {
  return [
    `import { withPinnedDirectory } from ${JSON.stringify(urls.pinned)};`,
    "import { basename, dirname } from 'node:path';",
    'const pinnedFor = (path, work) => withPinnedDirectory(dirname(path), (dir) => work(dir, basename(path)));',
    ...(urls.lock === undefined
      ? []
      : [
          `import { withFileLock as lockIn } from ${JSON.stringify(urls.lock)};`,
          'const withFileLock = (path, work, timeout) => pinnedFor(path, (dir, name) => lockIn(dir, name, work, timeout));',
        ]),
    ...(urls.write === undefined
      ? []
      : [
          `import { writeFileAtomic as writeIn } from ${JSON.stringify(urls.write)};`,
          'const writeFileAtomic = (path, text) => pinnedFor(path, (dir, name) => writeIn(dir, name, text));',
        ]),
  ].join('\n');
}
