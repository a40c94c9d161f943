// createServer: options → a ready Ahma MCP server (tools loaded, sandbox probed, engine running),
// independent of the transport that will carry it.
import { fileURLToPath } from 'node:url';
import {
  ArgumentValidator,
  createEngine,
  packageClosure,
  resolveSandboxScope,
  resolveToolsDir,
  type Engine,
} from '@ahma/core';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Logger } from 'pino';
import packageJson from '../package.json' with { type: 'json' };
import { Bundles } from './bundles.js';
import { activateToolsTool } from './mcp/activate-tools.js';
import { serverInstructions } from './mcp/instructions.js';
import type { AnsweredStarted } from './mcp/completion-push.js';
import { createMcpServer, notifyToolsChanged } from './mcp/server.js';
import type { ToolEntry } from './mcp/tools.js';
import type { ServerOptions } from './options.js';
import { ToolSet } from './tool-set.js';
import { watchToolsDir } from './watch-tools.js';

export const SERVER_NAME = 'ahma';
export const SERVER_VERSION: string = packageJson.version;

export interface AhmaServer {
  readonly server: Server;
  readonly engine: Engine;
  /** The tools offered right now (hot reload swaps them). */
  readonly tools: readonly ToolEntry[];
  /** Stops running operations and warm shells, then the MCP server. Idempotent. */
  close(): Promise<void>;
}

/** The bundled catalog: `tools/` at the repository root (dist/ and src/ are at the same depth). */
export function catalogDirectory(): string {
  return fileURLToPath(new URL('../../../tools', import.meta.url));
}

/** This package's directory (dist/ and src/ are at the same depth). */
function packageDirectory(): string {
  return fileURLToPath(new URL('..', import.meta.url));
}

export async function createServer(options: ServerOptions, logger: Logger): Promise<AhmaServer> {
  const env = process.env;
  const scope = await resolveSandboxScope({ scope: options.sandboxScope, env, cwd: process.cwd() });
  const toolsDir = resolveToolsDir({ toolsDir: options.toolsDir, env, scope });
  const engine = await createEngine({
    scope,
    noSandbox: options.noSandbox,
    keepCapabilities: options.keepCapabilities,
    noShellPool: options.noShellPool,
    logger,
    ...(options.stateDir === undefined ? {} : { stateDir: options.stateDir }),
    // R7.6: the engine refuses to start when this code (the server, every dependency it resolves,
    // @ahma/core with the helper) lies where commands can write; the helper and node are added.
    // Unconfined commands can write anywhere: nothing to check, and no start-up time to spend.
    ...(options.noSandbox ? {} : { codePaths: packageClosure(packageDirectory()) }),
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
      stateDir: engine.state.serverDir,
      toolsDir: toolsDir.dir,
    },
    'engine ready',
  );

  const answeredStarted: AnsweredStarted = new Set();
  const validator = new ArgumentValidator();
  // SPEC §3 bundles on demand: --tools reveals from the start, activate_tools at run time.
  const bundles: Bundles = new Bundles({
    catalogDir: catalogDirectory(),
    revealed: options.tools,
    executor: engine.executor,
    logger,
    reload: () => reloadTools(),
    served: () => toolSet.served(),
  });
  const toolSet: ToolSet = new ToolSet({
    toolsDir,
    catalogDir: catalogDirectory(),
    bundled: () => bundles.revealed,
    builtIns: options.noToolDiscovery ? [] : [activateToolsTool(bundles, validator)],
    engine,
    logger,
    context: {
      engine,
      validator,
      logger,
      defaultTimeoutSeconds: options.timeoutSeconds,
      forceSync: options.sync,
      inlineWaitMs: options.inlineWaitSeconds * 1000,
      heartbeatMs: options.heartbeatMs,
      pushLater: (id) => answeredStarted.add(id),
    },
  });
  await toolSet.load();

  const server = createMcpServer({
    name: SERVER_NAME,
    version: SERVER_VERSION,
    engine,
    logger,
    tools: () => toolSet.entries,
    instructions: serverInstructions({
      discovery: !options.noToolDiscovery,
      inlineWaitSeconds: options.inlineWaitSeconds,
    }),
    answeredStarted,
  });
  // Hot reload and revealed bundles: the tools are rebuilt and swapped in, and the client is told
  // to list them again. A save that changed nothing a client sees (same content, a comment) is no
  // news.
  async function reloadTools(): Promise<void> {
    if (await toolSet.load()) await notifyToolsChanged(server, logger);
  }
  const watcher = options.noHotReload
    ? undefined
    : watchToolsDir(toolsDir.dir, reloadTools, logger);
  let closing: Promise<void> | undefined;
  return {
    server,
    engine,
    get tools() {
      return toolSet.entries;
    },
    close: () =>
      (closing ??= (async () => {
        await watcher?.close(); // a reload in progress finishes before the engine goes
        await engine.close();
        await server.close();
      })()),
  };
}
