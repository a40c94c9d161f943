// createServer: options → a ready Ahma MCP server (tools loaded, sandbox probed, engine running),
// independent of the transport that will carry it.
import { fileURLToPath } from 'node:url';
import {
  ArgumentValidator,
  ASYNC_GUIDANCE_KEY,
  createEngine,
  formatDiagnostic,
  loadTools,
  resolveSandboxScope,
  resolveToolsDir,
  type Engine,
} from '@ahma/core';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Logger } from 'pino';
import packageJson from '../package.json' with { type: 'json' };
import { createMcpServer } from './mcp/server.js';
import {
  definitionTool,
  operationTools,
  shellTool,
  type ToolContext,
  type ToolEntry,
} from './mcp/tools.js';
import type { ServerOptions } from './options.js';

export const SERVER_NAME = 'ahma';
export const SERVER_VERSION: string = packageJson.version;

export interface AhmaServer {
  readonly server: Server;
  readonly engine: Engine;
  readonly tools: readonly ToolEntry[];
  /** Stops running operations and warm shells, then the MCP server. Idempotent. */
  close(): Promise<void>;
}

/** The bundled catalog: `tools/` at the repository root (dist/ and src/ are at the same depth). */
export function catalogDirectory(): string {
  return fileURLToPath(new URL('../../../tools', import.meta.url));
}

export async function createServer(options: ServerOptions, logger: Logger): Promise<AhmaServer> {
  const env = process.env;
  const scope = await resolveSandboxScope({ scope: options.sandboxScope, env, cwd: process.cwd() });
  const toolsDir = resolveToolsDir({ toolsDir: options.toolsDir, env, scope });
  const loaded = await loadTools({
    toolsDir,
    catalogDir: catalogDirectory(),
    bundled: options.tools,
  });
  for (const problem of loaded.diagnostics) {
    // R5.2: an invalid file is logged with its diagnostics and skipped; the server still starts.
    logger.warn(
      { file: problem.file, pointer: problem.pointer },
      `tool definition rejected: ${formatDiagnostic(problem)}`,
    );
  }

  const engine = await createEngine({
    scope,
    noSandbox: options.noSandbox,
    noShellPool: options.noShellPool,
    onListenerError: (error) => logger.error({ err: error }, 'completion listener failed'),
  });
  for (const warning of engine.sandbox.warnings) logger.warn(warning);
  logger.info(
    {
      scope,
      sandbox: engine.sandbox.mechanism,
      abi: engine.sandbox.abi,
      writable: engine.sandbox.writable,
      toolsDir: toolsDir.dir,
    },
    'engine ready',
  );

  const pushes = new Map<string, string | number>();
  const context: ToolContext = {
    engine,
    validator: new ArgumentValidator(),
    logger,
    defaultTimeoutSeconds: options.timeoutSeconds,
    forceSync: options.sync,
    pushTo: (id, token) => pushes.set(id, token),
  };
  const definitionTools = loaded.tools.flatMap((tool) => {
    if (tool.leaf.sequence === undefined) return [definitionTool(tool, context)];
    logger.warn(
      { tool: tool.name, file: tool.file },
      'sequence tools are not served by this version yet; skipped',
    );
    return [];
  });
  const tools: ToolEntry[] = [
    shellTool(context, loaded.guidance[ASYNC_GUIDANCE_KEY] ?? ''),
    ...operationTools(context),
    ...definitionTools,
  ];
  logger.info(
    { tools: tools.map((entry) => entry.tool.name) },
    `serving ${String(tools.length)} tools`,
  );

  const server = createMcpServer({
    name: SERVER_NAME,
    version: SERVER_VERSION,
    engine,
    logger,
    tools: () => tools,
    pushes,
  });
  let closing: Promise<void> | undefined;
  return {
    server,
    engine,
    tools,
    close: () =>
      (closing ??= (async () => {
        await engine.close();
        await server.close();
      })()),
  };
}
