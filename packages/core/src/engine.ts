// The execution engine a server creates once per scope: the sandbox (probed at creation, never
// silently skipped), the executor with its warm shell pool, the operations, and the server's private
// state (full-output logs under a disk budget, the per-server tool caches). Before anything runs it
// works out every path commands will be able to write, and refuses to start when Ahma's own code or
// its private state would lie there (R7.6). close() cancels whatever runs, stops the warm shells and
// removes the state, leaving no process or file behind. Commands never see the variables it is told
// to deny (R7.9), at start or later (denyEnv).
import { unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import type { Logger } from './logger.js';
import { WorkspaceLanes } from './lanes/workspace-lanes.js';
import { OperationManager, type OperationManagerOptions } from './operations/operations.js';
import { commandEnvironment, envDenyMatcher, tempDirectory } from './process/environment.js';
import { Executor } from './process/executor.js';
import {
  DEFAULT_MAX_OUTPUT_TOKENS,
  logPaths,
  outputBudgetBytes,
  presentLogs,
  summarizeResult,
} from './process/output.js';
import { ShellPool } from './process/shell-pool.js';
import { withDefaults, type Timings } from './process/timings.js';
import { defaultHelperPath } from './sandbox/helper-binary.js';
import { describeHandoff } from './sandbox/handoff.js';
import { HandoffWatch } from './sandbox/handoff-watch.js';
import { checkInstallLocation } from './sandbox/install-check.js';
import { EgressGate, type EgressCaller } from './network/egress-gate.js';
import type { EgressDecision } from './network/egress-proxy.js';
import { npmrcForCommands } from './sandbox/npmrc.js';
import { prepareGrants, profileHosts } from './sandbox/profiles.js';
import type { NetworkMode } from './sandbox/network.js';
import { createSandbox, writablePaths, type Sandbox } from './sandbox/sandbox.js';
import { WriteGrants } from './sandbox/write-grants.js';
import { LogStore } from './state/log-store.js';
import { ownTag } from './state/owner.js';
import type { LabelledPath } from './state/paths.js';
import { GrantLedger } from './state/grant-ledger.js';
import { EMPTY_DIRECTORY_SCRIPT, removeConfined, removeTree } from './state/remove.js';
import { createStateDir, type StateDir } from './state/state-dir.js';
import { sweepDeadServers, type SweepReport } from './state/sweep.js';

export interface EngineOptions extends OperationManagerOptions {
  /** The real path of the sandbox scope (see resolveSandboxScope). */
  readonly scope: string;
  /** --no-sandbox. */
  readonly noSandbox?: boolean;
  readonly extraWritable?: readonly string[];
  /** R7.10: more paths commands may read (--allow-read), even inside a denied one. */
  readonly extraReadable?: readonly string[];
  /** R7.10: more paths commands may not read (--deny-read). */
  readonly denyRead?: readonly string[];
  /**
   * R7.14: toolchain profiles whose paths commands may also read and write (sandbox/profiles.ts);
   * an unknown name refuses the start (CONFIG_INVALID). Paths here and in extraReadable,
   * extraWritable and denyRead may start with `~/` (the HOME of `env`).
   */
  readonly profiles?: readonly string[];
  /**
   * R7.11: hand-off paths (absolute) commands may write after all (--allow-handoff-writes); every
   * other hand-off file is kept read-only where the helper can, and watched everywhere.
   */
  readonly allowHandoffWrites?: readonly string[];
  readonly writableTemp?: boolean;
  /** The temp directory commands may write (default: the one `env` names, see tempDirectory). */
  readonly tempDir?: string;
  readonly allowUnixSockets?: boolean;
  /** R7.15: what commands may reach on the network (--network; default host). */
  readonly network?: NetworkMode;
  /**
   * R7.17: with `proxy`, host rules commands may reach (--allow-host; the enabled profiles' hosts
   * are added) and may not (--deny-host). A malformed rule refuses the start (CONFIG_INVALID).
   */
  readonly allowHosts?: readonly string[];
  readonly denyHosts?: readonly string[];
  /** R7.19: every decision of the egress proxy (the audit log). */
  readonly onEgress?: (decision: EgressDecision<EgressCaller>) => void;
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
  /**
   * R7.9: variables removed from every command's environment: names, or globs of names (`*` any
   * run of characters, `?` one, e.g. `AWS_*`). A malformed entry refuses the start (AhmaError
   * CONFIG_INVALID, see envDenyProblem). denyEnv() adds more later.
   */
  readonly envDeny?: readonly string[];
  /**
   * R15.2: the output a result shows, in tokens (estimated as bytes / 4, see BYTES_PER_TOKEN),
   * unless a call asks for another budget (--max-output-tokens; default 10,000).
   */
  readonly maxOutputTokens?: number;
  /**
   * How long each step of stopping a command waits: the grace between SIGTERM and SIGKILL, the
   * server's backstop and watchdog, the zygote's answer (process/timings.ts has each rule).
   * Default DEFAULT_TIMINGS; tests shorten them.
   */
  readonly timings?: Partial<Timings>;
  /**
   * The root of Ahma's private state (--state-dir). Default: the first of $XDG_STATE_HOME/ahma,
   * ~/.local/state/ahma and $XDG_RUNTIME_DIR/ahma that lies outside every writable path. The root
   * is kept; this engine's directories in it are removed on close (or swept after a crash).
   */
  readonly stateDir?: string;
  /** Disk space all full-output logs may take together (default 1 GiB). */
  readonly logBudgetBytes?: number;
  /**
   * Code that runs unconfined: the server's packages and their dependencies (packageClosure).
   * When given, the engine refuses to start (INSTALL_UNSAFE) if any of it, the sandbox helper or
   * node itself lies in a writable path. Not checked with noSandbox, where nothing is protected.
   */
  readonly codePaths?: readonly LabelledPath[];
  readonly helperPath?: string;
}

export interface Engine {
  readonly sandbox: Sandbox;
  readonly executor: Executor;
  readonly operations: OperationManager;
  /** Workspace lanes: the exclusive calls of one workspace take turns (lanes/workspace-lanes.ts). */
  readonly lanes: WorkspaceLanes;
  /** The current warm shell pool (denyEnv may replace it). */
  readonly pool: ShellPool | undefined;
  /**
   * R7.9: also removes these variables (names or globs, as EngineOptions.envDeny) from every
   * command's environment from now on; throws (CONFIG_INVALID) for a malformed entry, adding none.
   * When that changes the environment, the warm shells (made with the old one) take no further
   * command: a new pool starts, and the old one's zygote ends once it has been idle for the pool's
   * idle time (commands running in it finish), or at close. Returns whether the environment
   * changed.
   */
  denyEnv(entries: readonly string[]): boolean;
  /**
   * R7.16: the egress proxy commands reach the network through, and the person's grants (R7.18):
   * started with the engine under `--network proxy`, else by the first command of a tool file that
   * asks for `proxy`; undefined until then.
   */
  readonly egress: EgressGate | undefined;
  /** R7.18: the writes people allowed outside the writable paths, per session. */
  readonly writeGrants: WriteGrants;
  /** The private state: its root, this engine's directory and logs, its cache directory. */
  readonly state: StateDir;
  /** The full-output logs and their disk budget. */
  readonly logs: LogStore;
  /** The sweep of what killed servers left under the state root (runs in the background). */
  readonly swept: Promise<SweepReport>;
  /** Cancels running operations, waits for them, stops the warm shells, removes the state. Idempotent. */
  close(): Promise<void>;
}

export async function createEngine(options: EngineOptions): Promise<Engine> {
  const baseEnv = options.env ?? process.env;
  // A malformed --env-deny entry refuses the start before anything is made.
  envDenyMatcher(options.envDeny ?? []);
  const helperPath = options.helperPath ?? defaultHelperPath();
  // R7.14: the profiles' paths and the operator's, before the state dir and install checks see them.
  const home = baseEnv['HOME'] ?? homedir();
  const grants = await prepareGrants({
    home,
    profiles: options.profiles ?? [],
    read: options.extraReadable ?? [],
    write: options.extraWritable ?? [],
    denyRead: options.denyRead ?? [],
  });
  for (const skipped of grants.skipped) options.logger?.warn(skipped);
  // Everything commands will be able to write, known before anything is created or run.
  const tempDir = options.tempDir ?? tempDirectory(baseEnv);
  const writable = await writablePaths({ ...options, extraWritable: grants.write, tempDir });
  // Before the helper first runs (the probe runs it unconfined): is it, or the code, writable?
  if (options.codePaths !== undefined && options.noSandbox !== true) {
    await checkInstallLocation(
      [
        ...options.codePaths,
        { path: helperPath, label: 'the sandbox helper' },
        { path: process.execPath, label: 'node' },
      ],
      writable,
    );
  }
  const owner = ownTag();
  const state = await createStateDir({ root: options.stateDir, env: baseEnv, writable, owner });
  const timings = withDefaults(options.timings);
  let sandbox: Sandbox;
  // R7.18: the person's lasting grants (hosts and writes), one ledger in the private state.
  const ledger = new GrantLedger(state.root);
  let egress: EgressGate | undefined;
  // R7.16: one egress proxy per engine: started now under --network proxy, else when a tool file
  // that asks for `proxy` first runs a command.
  let egressStart: Promise<EgressGate> | undefined;
  const startEgress = () =>
    (egressStart ??= EgressGate.start({
      scope: options.scope,
      allow: [...profileHosts(options.profiles ?? []), ...(options.allowHosts ?? [])],
      deny: options.denyHosts ?? [],
      ledger,
      onDecision: options.onEgress,
    }).then((gate) => (egress = gate)));
  try {
    // The proxy first: the sandbox lets commands connect to its port alone. Unconfined commands
    // (--no-sandbox) would not be held to it: no proxy then (the sandbox warns).
    if (options.network === 'proxy' && options.noSandbox !== true) await startEgress();
    sandbox = await createSandbox({
      scope: options.scope,
      cacheRoot: state.cacheDir,
      // The helper escalates SIGTERM to SIGKILL itself: it must use the executor's grace, or the
      // executor's backstop kills the helper first and orphans whatever ignores SIGTERM.
      graceMs: timings.graceMs,
      helperPath,
      ...(options.noSandbox === undefined ? {} : { disabled: options.noSandbox }),
      extraWritable: grants.write,
      // file_arg files are written in the private state, where commands read them.
      extraReadable: [...grants.read, state.argsDir],
      ...(options.denyRead === undefined ? {} : { denyRead: options.denyRead }),
      // R7.10: HOME is readable but for the credentials; Ahma's own state never is.
      home,
      privateState: state.root,
      handoff: { allow: options.allowHandoffWrites ?? [] },
      ...(options.writableTemp === undefined ? {} : { writableTemp: options.writableTemp }),
      tempDir,
      ...(options.allowUnixSockets === undefined
        ? {}
        : { allowUnixSockets: options.allowUnixSockets }),
      ...(options.network === undefined ? {} : { network: options.network }),
      ...(egress === undefined ? {} : { proxyPort: egress.port }),
      ...(options.keepCapabilities === undefined
        ? {}
        : { keepCapabilities: options.keepCapabilities }),
    });
  } catch (error) {
    // Nothing has run yet: both directories are as this engine made them.
    await egress?.close();
    await Promise.all([removeTree(state.serverDir), removeTree(state.cacheDir)]);
    throw error;
  }
  // R7.9: what commands may not see. Only grows (denyEnv); `env` is read at every spawn.
  let deny: readonly string[] = options.envDeny ?? [];
  // R7.10: npm's settings without the tokens, ~/.npmrc itself being denied.
  const npmrc = npmrcForCommands(baseEnv, home, sandbox.policy.denies, sandbox.cacheRoot);
  const environment = () => ({
    ...commandEnvironment(baseEnv, sandbox.cacheRoot, deny),
    ...npmrc,
  });
  let env = environment();
  // Cache directories are written by commands: emptied by a remover confined to each.
  const removeCache = (dir: string) =>
    removeConfined(
      dir,
      sandbox.confine([dir], ['/bin/sh', '-c', EMPTY_DIRECTORY_SCRIPT, 'sh', dir]),
      env,
    );
  const swept = sweepDeadServers({ root: state.root, self: owner, removeCache });
  const logs = new LogStore(state.logDir, options.logBudgetBytes);
  // The pool's bootstrap needs bash ≥ 4.4 (mapfile -d) and the Linux helper's supervision. Its
  // warm shells carry the environment they were made with: a change of it needs a new pool.
  const newPool = (): ShellPool | undefined =>
    options.noShellPool === true || process.platform !== 'linux'
      ? undefined
      : new ShellPool({
          sandbox,
          env,
          ...(options.poolSize === undefined ? {} : { size: options.poolSize }),
          ...(options.poolIdleMs === undefined ? {} : { idleMs: options.poolIdleMs }),
          ...(options.logger === undefined ? {} : { logger: options.logger }),
          timings,
        });
  let pool = newPool();
  pool?.start();
  /** Pools replaced (renewPool): no new command; their zygotes end when idle, or at close. */
  const retired: ShellPool[] = [];
  let closing: Promise<void> | undefined;
  /** New warm shells for the next commands (the environment or the hand-off mounts changed). */
  const renewPool = (why: string) => {
    if (pool === undefined || closing !== undefined) return;
    retired.push(pool);
    pool = newPool();
    pool?.start();
    options.logger?.info(`${why}: new warm shells were started`);
  };
  // R7.11: hand-off files changed (by a command, or outside): mounts worked out again, new pool.
  const handoff =
    sandbox.handoff.mechanism === 'off'
      ? undefined
      : new HandoffWatch({
          scope: options.scope,
          allow: options.allowHandoffWrites ?? [],
          handoff: () => sandbox.handoff,
          changed: () => {
            if (sandbox.refreshHandoff()) renewPool('the hand-off files changed');
          },
        });
  // R7.18: writes a person allows outside the writable paths; never where Ahma's code lies.
  const writeGrants = await WriteGrants.load({
    scope: options.scope,
    home,
    denies: sandbox.policy.denies,
    code: [
      ...(options.codePaths ?? []),
      { path: helperPath, label: 'the sandbox helper' },
      { path: process.execPath, label: 'node' },
    ],
    ledger,
  });
  const executor = new Executor({
    sandbox,
    handoff,
    egress: startEgress,
    writeGrants,
    ...(sandbox.handoff.mechanism === 'mount'
      ? { explainHandoff: (path: string) => describeHandoff(path, options.scope) }
      : {}),
    // Getters: the executor reads both at every command, so a denyEnv() reaches the next one.
    get env() {
      return env;
    },
    get pool() {
      return pool;
    },
    limits: {
      budgetBytes: outputBudgetBytes(options.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS),
      logs,
    },
    timings,
  });
  // A log lives as long as its operation is in the history; a result shows its logs as they are.
  const lanes = new WorkspaceLanes(options.scope);
  const operations = new OperationManager(
    { ...options, lanes },
    {
      onForget: (result) => {
        for (const path of logPaths(result)) logs.release(path);
      },
      present: (result) => presentLogs(result, logs),
      // An ended connection's operations keep the end of their output (and their logs).
      summarize: (result) => summarizeResult(result),
    },
  );
  return {
    sandbox,
    executor,
    operations,
    lanes,
    get pool() {
      return pool;
    },
    denyEnv(entries) {
      envDenyMatcher(entries); // throws for a malformed entry before anything changes
      const added = entries.filter((entry) => !deny.includes(entry));
      if (added.length === 0) return false;
      deny = [...deny, ...added];
      const next = environment();
      // Entries only remove: the same number of variables is the same environment.
      if (Object.keys(next).length === Object.keys(env).length) return false;
      env = next;
      renewPool('the command environment changed');
      return true;
    },
    get egress() {
      return egress;
    },
    writeGrants,
    state,
    logs,
    swept,
    close: () =>
      (closing ??= (async () => {
        // Cancel first: pooled commands are stopped through the zygote.
        await operations.shutdown();
        await Promise.all([pool, ...retired].map((each) => each?.close()));
        await egressStart?.then((gate) => gate.close()).catch(() => undefined);
        await swept;
        logs.clear();
        // The server's own npmrc copy first (unlink follows no link), so that a cache no command
        // wrote is empty and needs no remover.
        const npmrcCopy = npmrc['npm_config_userconfig'];
        if (npmrcCopy !== undefined) await unlink(npmrcCopy).catch(() => undefined);
        // Left behind on failure (a file in use, …): the next start sweeps it once we are gone.
        await Promise.all([
          removeTree(state.serverDir).catch(() => undefined),
          removeCache(state.cacheDir).catch(() => false),
        ]);
      })()),
  };
}
