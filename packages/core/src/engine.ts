// The execution engine a server creates once per scope: the sandbox (probed at creation, never
// silently skipped), the executor with its warm shell pool, and the operations. close() cancels
// whatever runs and stops the warm shells, leaving no process behind.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from './logger.js';
import { OperationManager, type OperationManagerOptions } from './operations/operations.js';
import { commandEnvironment } from './process/environment.js';
import { DEFAULT_GRACE_MS, Executor } from './process/executor.js';
import { DEFAULT_HEAD_BYTES, DEFAULT_TAIL_BYTES, ensureLogDir } from './process/output.js';
import { ShellPool } from './process/shell-pool.js';
import { createSandbox, type Sandbox } from './sandbox/sandbox.js';

export interface EngineOptions extends OperationManagerOptions {
  /** The real path of the sandbox scope (see resolveSandboxScope). */
  readonly scope: string;
  /** --no-sandbox. */
  readonly noSandbox?: boolean;
  readonly extraWritable?: readonly string[];
  readonly writableTemp?: boolean;
  readonly allowUnixSockets?: boolean;
  /** --keep-capabilities: commands keep the server's capabilities (root's, say). */
  readonly keepCapabilities?: boolean;
  /** Where the engine reports trouble it handles on its own (the pool's); silent by default. */
  readonly logger?: Logger;
  /** --no-shell-pool. */
  readonly noShellPool?: boolean;
  readonly poolSize?: number;
  readonly poolIdleMs?: number;
  /** The server's environment, the base of every command's (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly headBytes?: number;
  readonly tailBytes?: number;
  readonly graceMs?: number;
  /** Where output logs and redirected caches go (default a per-process directory in the temp dir). */
  readonly stateDir?: string;
  readonly helperPath?: string;
}

export interface Engine {
  readonly sandbox: Sandbox;
  readonly executor: Executor;
  readonly operations: OperationManager;
  readonly pool: ShellPool | undefined;
  /** Cancels running operations, waits for them, and stops the warm shells. Idempotent. */
  close(): Promise<void>;
}

export async function createEngine(options: EngineOptions): Promise<Engine> {
  // A state directory of our own making (logs of truncated output, redirected caches) lives as long
  // as the engine; one the caller names is the caller's to keep.
  const ownStateDir = options.stateDir === undefined;
  const stateDir = options.stateDir ?? (await mkdtemp(join(tmpdir(), 'ahma-')));
  const logDir = join(stateDir, 'output');
  await ensureLogDir(logDir);
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  const sandbox = await createSandbox({
    scope: options.scope,
    cacheRoot: join(stateDir, 'cache'),
    // The helper escalates SIGTERM to SIGKILL itself: it must use the executor's grace, or the
    // executor's backstop kills the helper first and orphans whatever ignores SIGTERM.
    graceMs,
    ...(options.noSandbox === undefined ? {} : { disabled: options.noSandbox }),
    ...(options.extraWritable === undefined ? {} : { extraWritable: options.extraWritable }),
    ...(options.writableTemp === undefined ? {} : { writableTemp: options.writableTemp }),
    ...(options.allowUnixSockets === undefined
      ? {}
      : { allowUnixSockets: options.allowUnixSockets }),
    ...(options.keepCapabilities === undefined
      ? {}
      : { keepCapabilities: options.keepCapabilities }),
    ...(options.helperPath === undefined ? {} : { helperPath: options.helperPath }),
  });
  const env = commandEnvironment(options.env ?? process.env, sandbox.cacheRoot);
  // The pool's bootstrap needs bash ≥ 4.4 (mapfile -d) and the Linux helper's supervision.
  const pool =
    options.noShellPool === true || process.platform !== 'linux'
      ? undefined
      : new ShellPool({
          sandbox,
          env,
          ...(options.poolSize === undefined ? {} : { size: options.poolSize }),
          ...(options.poolIdleMs === undefined ? {} : { idleMs: options.poolIdleMs }),
          ...(options.logger === undefined ? {} : { logger: options.logger }),
        });
  pool?.start();
  const executor = new Executor({
    sandbox,
    env,
    pool,
    limits: {
      headBytes: options.headBytes ?? DEFAULT_HEAD_BYTES,
      tailBytes: options.tailBytes ?? DEFAULT_TAIL_BYTES,
      logDir,
    },
    graceMs,
  });
  const operations = new OperationManager(options);
  let closing: Promise<void> | undefined;
  return {
    sandbox,
    executor,
    operations,
    pool,
    close: () =>
      (closing ??= (async () => {
        // Cancel first: pooled commands are stopped through the zygote.
        await operations.shutdown();
        await pool?.close();
        if (ownStateDir) await rm(stateDir, { recursive: true, force: true });
      })()),
  };
}
