// The runtime: what one Ahma process serves, whatever carries it. It owns the engine (sandbox,
// warm shells, operations), the tool set with its hot reload and revealed bundles, and their
// watchers. It reads nothing from the process: options, environment and working directory are
// given (the CLI is their only reader). MCP connections are made over it (protocol/server.ts), one per
// client connection; the one-shot CLI calls its tools directly. R7.9: no command sees Ahma's
// secrets, the API keys of livelog tools (any tool file ever loaded) or what --env-deny names.
import { join, resolve } from 'node:path';
import {
  ArgumentValidator,
  createEngine,
  livelogKeyVariables,
  packageClosure,
  readCatalog,
  Registry,
  resolveSandboxScope,
  resolveToolsDir,
  type Engine,
  type Environment,
} from '@ahma/core';
import { TOKEN_PATH_VARIABLE } from '@ahma/remote';
import type { Logger } from 'pino';
import { auditEgress } from '../calls/audit.js';
import { Bundles } from '../tools/bundles.js';
import { serverInstructions } from './instructions.js';
import { activateToolsTool } from '../tools/activate-tools.js';
import { readMcpConfig } from '../tools/remote/mcp-config.js';
import { RemoteTools } from '../tools/remote/remote-tools.js';
import { registryTools } from '../tools/registry/registry.js';
import type { Introspection } from '../tools/introspected/introspection.js';
import { programDirectories } from '../tools/introspected/program.js';
import type { ToolEntry } from '../tools/tool.js';
import type { ServerOptions } from './settings.js';
import { ToolSet } from '../tools/tool-set.js';
import { watchToolsDir } from './watch-tools.js';
import { catalogDirectory, packageDirectory } from '../package.js';

// The environment the server is given (core's Environment, as process.env holds it): read for
// settings, and the base of every command's own, without Ahma's secrets (R7.9).
export type { Environment };

export interface RuntimeSettings {
  readonly options: ServerOptions;
  /** The server's environment: the base of every command's, and where settings are read. */
  readonly env: Environment;
  /** The directory the server was started in (the default sandbox scope). */
  readonly cwd: string;
  readonly logger: Logger;
}

export interface Runtime {
  readonly engine: Engine;
  readonly logger: Logger;
  /** The initialize result's instructions (runtime/instructions.ts). */
  readonly instructions: string;
  /** The same for 2026-07-28 clients (server/discover), which get no pushes. */
  readonly modernInstructions: string;
  /** R2.7: --claude-channel: finished results also go out as notifications/claude/channel. */
  readonly claudeChannel: boolean;
  /** The tools offered right now, in list order (hot reload and revealed bundles swap them). */
  readonly tools: readonly ToolEntry[];
  /**
   * SPEC §10: resolves when the remote MCP servers still on their first connection have listed
   * their tools (or asked for a login), and SPEC §15 the --introspect programs being read are
   * served, waiting 2 s at most in all: tools/list awaits it. `whole`: as long as they take (the
   * one-shot CLI, which needs the tool it names).
   */
  remotesListed(options?: { readonly whole?: boolean }): Promise<void>;
  /** Called after the listed tools changed; returns the unsubscribe function. */
  onToolsChanged(listener: () => void): () => void;
  /** Stops the watchers, then running operations and warm shells. Idempotent. */
  close(): Promise<void>;
}

/**
 * R7.9: the variables Ahma itself reads as secrets, removed from every command's environment
 * (with --env-deny's entries and the livelog API key variables, see livelogKeyVariables).
 */
export const AHMA_SECRET_VARIABLES: readonly string[] = [
  'AHMA_HTTP_TOKEN',
  'AHMA_HTTP_TOKEN_FILE',
  'AHMA_OAUTH_CLIENT_SECRET',
];

// ---- the sandbox the options ask for (the server's, and the doctor's on its own scope) --------

export type EngineOptions = Parameters<typeof createEngine>[0];

export interface SandboxSettings {
  readonly options: ServerOptions;
  readonly env: Environment;
  /** Where relative paths of the command line are resolved from. */
  readonly cwd: string;
  readonly scope: string;
  /** The toolchain profiles in force: --profile's, and those of the bundles given to --tools. */
  readonly profiles: readonly string[];
}

/**
 * R7.6, R7.9–R7.14: confinement, capabilities, warm shells, the state root, the check of where the
 * code lies, the variables commands never see, what they may read and write besides the scope,
 * and which hand-off files they may write.
 */
export function sandboxEngineOptions(settings: SandboxSettings): EngineOptions {
  const { options, env, cwd, scope } = settings;
  return {
    scope,
    env,
    envDeny: [...AHMA_SECRET_VARIABLES, ...options.envDeny],
    profiles: settings.profiles,
    extraReadable: options.allowRead,
    extraWritable: options.allowWrite,
    allowHandoffWrites: options.allowHandoffWrites.map((path) => resolve(scope, path)),
    // R7.10: Ahma's secret files wherever they were named (those in its private state are denied
    // anyway): the HTTP token file and the OAuth token store.
    denyRead: [...options.denyRead, ...secretFiles(options, env, cwd)],
    noSandbox: options.noSandbox,
    keepCapabilities: options.keepCapabilities,
    network: options.network,
    allowHosts: options.allowHosts,
    denyHosts: options.denyHosts,
    noShellPool: options.noShellPool,
    ...(options.stateDir === undefined ? {} : { stateDir: options.stateDir }),
    // R7.6: the engine refuses to start when this code (the server, every dependency it resolves,
    // @ahma/core with the helper) lies where commands can write; the helper and node are added.
    // Unconfined commands can write anywhere: nothing to check, and no start-up time to spend.
    ...(options.noSandbox ? {} : { codePaths: packageClosure(packageDirectory()) }),
  };
}

/** --http-token-file and AHMA_HTTP_CLIENT_TOKEN_PATH, as absolute paths, when given. */
function secretFiles(options: ServerOptions, env: Environment, cwd: string): string[] {
  return [options.httpTokenFile, env[TOKEN_PATH_VARIABLE]]
    .filter((path): path is string => path !== undefined && path !== '')
    .map((path) => resolve(cwd, path));
}

export async function createRuntime(settings: RuntimeSettings): Promise<Runtime> {
  const { options, env, logger } = settings;
  const scope = await resolveSandboxScope({ scope: options.sandboxScope, env, cwd: settings.cwd });
  const toolsDir = resolveToolsDir({ toolsDir: options.toolsDir, env, scope });
  // R7.9: the whole catalog (a bundle may be revealed later) and the tools directory as it is now;
  // keys of tool files added later are denied before they load (denyLivelogKeys).
  const livelogKeys = await livelogKeyVariables([toolsDir.dir, catalogDirectory()]);
  // R7.14: only the operator widens the sandbox: --profile, and the profiles of the bundles given
  // to --tools. A bundle revealed later, or a tool file, gets none (the log and activate_tools say
  // which flag would enable them).
  const profiles = [
    ...new Set([...options.profiles, ...(await bundleProfiles(options.tools, logger))]),
  ];
  const sandbox = sandboxEngineOptions({ options, env, cwd: settings.cwd, scope, profiles });
  const engine = await createEngine({
    ...sandbox,
    // SPEC §15: the directory of a program --introspect names by its path, so its tools can run it.
    extraReadable: [
      ...(sandbox.extraReadable ?? []),
      ...(await programDirectories(options.introspect)),
    ],
    envDeny: [...(sandbox.envDeny ?? []), ...livelogKeys],
    maxOutputTokens: options.maxOutputTokens,
    timings: options.testTimings,
    logger,
    onEgress: (decision) => auditEgress({ logger, scope }, decision),
    onListenerError: (error) => logger.error({ err: error }, 'completion listener failed'),
  });
  for (const warning of engine.sandbox.warnings) logger.warn(warning);
  void engine.swept.then((report) => {
    if (report.removed.length > 0) {
      logger.info({ removed: report.removed }, 'removed what killed servers left behind');
    }
    for (const { path, error } of report.failed) {
      logger.warn({ path, error }, 'could not remove what a killed server left behind');
    }
  });
  logger.info(
    {
      scope,
      sandbox: engine.sandbox.mechanism,
      abi: engine.sandbox.abi,
      writable: engine.sandbox.writable,
      profiles,
      stateDir: engine.state.serverDir,
      toolsDir: toolsDir.dir,
    },
    'engine ready',
  );

  const validator = new ArgumentValidator();
  const toolsChanged = new Set<() => void>();
  // SPEC §3 bundles on demand: --tools reveals from the start, activate_tools at run time.
  const bundles: Bundles = new Bundles({
    catalogDir: catalogDirectory(),
    revealed: options.tools,
    profiles,
    executor: engine.executor,
    logger,
    reload: () => reloadTools(),
    served: () => toolSet.served(),
  });
  // SPEC §8: registered commands, their names checked against every other tool's.
  const registry = options.registry
    ? await Registry.open({
        file: resolve(settings.cwd, options.registryFile ?? join(scope, '.ahma', 'registry.json')),
        lookup: { scope, path: env['PATH'] },
        writable: engine.sandbox.writable,
        nameTaken: (name) => toolSet.ownerOf(name),
      })
    : undefined;
  for (const notice of registry?.notices ?? []) {
    logger.warn(notice, 'the registry file was unreadable: moved aside, the registry starts empty');
  }
  // SPEC §10: the tools of remote MCP servers, connected in the background.
  const remote = await remoteTools(options, settings, scope, engine, () => {
    toolSet.refresh();
    for (const listener of toolsChanged) listener();
  }).catch(async (error: unknown) => {
    await engine.close(); // refused at start: nothing of the engine may outlive it
    throw error;
  });
  // SPEC §15: --introspect's programs; its code (the help parsers) is loaded only when given.
  const introspection = await introspectedTools(options, settings, engine, [
    ...(sandbox.envDeny ?? []),
    ...livelogKeys,
  ]).catch(async (error: unknown) => {
    await remote?.close();
    await engine.close();
    throw error;
  });
  const toolSet: ToolSet = new ToolSet({
    toolsDir,
    catalogDir: catalogDirectory(),
    bundled: () => bundles.revealed,
    builtIns: [
      ...(options.noToolDiscovery ? [] : [activateToolsTool(bundles, { validator, logger })]),
      ...(registry === undefined
        ? []
        : registryTools({
            registry,
            scope,
            shadowedBy: (name) => toolSet.ownerOf(name),
            validator,
            logger,
          })),
    ],
    registered: () => registry?.commands ?? [],
    remote: () => remote?.entries ?? [],
    ...(introspection === undefined ? {} : { introspected: introspection }),
    profiles,
    engine,
    logger,
    context: {
      engine,
      operations: engine.operations,
      validator,
      logger,
      env,
      defaultTimeoutSeconds: options.timeoutSeconds,
      forceSync: options.sync,
      inlineWaitMs: options.inlineWaitSeconds * 1000,
      heartbeatMs: options.heartbeatMs,
    },
  });
  await denyLivelogKeys();
  await toolSet.load();
  remote?.start();
  introspection?.readMissing(reloadTools);
  registry?.onChange(() => {
    toolSet.refresh();
    for (const listener of toolsChanged) listener();
  });
  if (registry !== undefined) {
    logger.info(
      { file: registry.file, commands: registry.commands.length },
      'command registry ready',
    );
  }

  // Hot reload and revealed bundles: the tools are rebuilt and swapped in, and every connection is
  // told. A save that changed nothing a client sees (same content, a comment) is no news.
  async function reloadTools(): Promise<void> {
    await denyLivelogKeys();
    if (!(await toolSet.load())) return;
    for (const listener of toolsChanged) listener();
  }
  // R7.9: before every load, so that no command (an availability probe of the new file included)
  // sees a key a livelog tool file names; a variable once denied stays denied.
  async function denyLivelogKeys(): Promise<void> {
    const variables = await livelogKeyVariables([toolsDir.dir]);
    if (engine.denyEnv(variables)) {
      logger.info({ variables }, "livelog tools' API key variables are now kept from commands");
    }
  }
  const watcher = options.noHotReload
    ? undefined
    : watchToolsDir(toolsDir.dir, reloadTools, logger);
  const instructionOptions = {
    discovery: !options.noToolDiscovery,
    inlineWaitSeconds: options.inlineWaitSeconds,
  };
  let closing: Promise<void> | undefined;
  return {
    engine,
    logger,
    instructions: serverInstructions({ ...instructionOptions, delivery: 'push' }),
    modernInstructions: serverInstructions({ ...instructionOptions, delivery: 'task' }),
    claudeChannel: options.claudeChannel,
    get tools() {
      return toolSet.entries;
    },
    remotesListed: async (options) => {
      await Promise.all([remote?.firstConnections(options), introspection?.firstRead(options)]);
    },
    onToolsChanged(listener) {
      toolsChanged.add(listener);
      return () => toolsChanged.delete(listener);
    },
    close: () =>
      (closing ??= (async () => {
        await watcher?.close(); // a reload in progress finishes before the engine goes
        await introspection?.close(); // a help being read is cancelled, then its reload ends
        await remote?.close();
        await engine.close();
      })()),
  };
}

/** The sandbox profiles the bundled definitions given to --tools name (R7.14). */
async function bundleProfiles(tools: readonly string[], logger: Logger): Promise<string[]> {
  if (tools.length === 0) return [];
  // Unreadable or invalid bundles are reported when they load (bundles.ts, tool-set.ts).
  const catalog = await readCatalog(catalogDirectory()).catch(() => undefined);
  const named = (catalog?.definitions ?? []).filter((entry) =>
    tools.includes(entry.definition.name),
  );
  const profiles = named.flatMap((entry) => entry.definition.sandbox_profiles ?? []);
  if (profiles.length > 0) {
    logger.info({ tools, profiles }, 'sandbox profiles enabled by the bundles given to --tools');
  }
  return profiles;
}

/**
 * SPEC §15: the tools of --introspect's programs, when it is given: imported here, so that a
 * server without it never loads the help parsers. Cached readings are served from the start.
 */
async function introspectedTools(
  options: ServerOptions,
  settings: RuntimeSettings,
  engine: Engine,
  envDeny: readonly string[],
): Promise<Introspection | undefined> {
  if (options.introspect.length === 0) return undefined;
  const { Introspection } = await import('../tools/introspected/introspection.js');
  return Introspection.start({
    programs: options.introspect,
    env: settings.env,
    stateRoot: engine.state.root,
    serverDir: engine.state.serverDir,
    envDeny,
    logger: settings.logger,
  });
}

/** The remote MCP servers of --mcp-config (or <scope>/.ahma/mcp.json), when there are any. */
async function remoteTools(
  options: RuntimeSettings['options'],
  settings: RuntimeSettings,
  scope: string,
  engine: Engine,
  onChange: () => void,
): Promise<RemoteTools | undefined> {
  const file =
    options.mcpConfig === undefined
      ? join(scope, '.ahma', 'mcp.json')
      : resolve(settings.cwd, options.mcpConfig);
  const config = await readMcpConfig(file, options.mcpConfig !== undefined);
  if (config === undefined || (config.servers.length === 0 && config.skipped.length === 0))
    return undefined;
  const remote = new RemoteTools({
    config,
    env: settings.env,
    stateRoot: engine.state.root,
    writable: engine.sandbox.writable,
    callbackPort: options.oauthCallbackPort,
    callTimeoutMs: options.timeoutSeconds * 1000,
    logger: settings.logger,
    onChange,
  });
  await remote.check();
  return remote;
}
