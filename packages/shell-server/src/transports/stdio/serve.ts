// `ahma-shell --mode stdio`: MCP over stdin/stdout, as MCP clients start it. Refused on an
// interactive terminal (R8.10), where it could only confuse a person.
import { AhmaError } from '@ahma/core';
import { serveOnStdio } from './eras.js';
import { createRuntime, type Runtime, type RuntimeSettings } from '../../runtime/runtime.js';
import { RpcCode } from '../../jsonrpc/codes.js';
import { refusal } from '../../jsonrpc/refusal.js';
import { answerWithRefusal } from './start-refusal.js';

export const TTY_REFUSAL = `ahma-shell --mode stdio speaks the Model Context Protocol on stdin/stdout: an MCP client
starts it, it is not meant to be typed into. Register it with your client instead, for example:

  Claude Code:  claude mcp add ahma -- ahma-shell --mode stdio --sandbox-scope "$PWD"
  VS Code:      .vscode/mcp.json → { "servers": { "ahma": { "type": "stdio", "command": "ahma-shell",
                  "args": ["--mode", "stdio", "--sandbox-scope", "\${workspaceFolder}"] } } }
  Cursor:       .cursor/mcp.json → { "mcpServers": { "ahma": { "command": "ahma-shell",
                  "args": ["--mode", "stdio", "--sandbox-scope", "\${workspaceFolder}"] } } }

To try a tool by hand: ahma-shell --tool_name sandboxed_shell -- echo hello
`;

/**
 * One runtime and one connection, on stdin/stdout; resolves with the exit code once the client
 * has gone (0). A runtime that cannot start (an AhmaError: no sandbox, a scope refused, …) is
 * explained on stderr, then to the client's requests, and resolves 1; anything else is a bug and
 * is thrown.
 */
export async function serveStdio(
  settings: RuntimeSettings,
  stderr: (text: string) => void,
  /** What else serves the runtime while the client is connected (--ops-page's page). */
  beside?: (runtime: Runtime) => Promise<{ close(): Promise<void> } | undefined>,
): Promise<number> {
  // SIGTERM and SIGINT are heard from the start: one that comes while the runtime is being made
  // ends it as soon as it is there, so nothing it started (its sandbox's processes, its private
  // state) is left behind.
  let signalled = false;
  let onSignal = () => void (signalled = true);
  const heard = () => onSignal();
  process.once('SIGTERM', heard);
  process.once('SIGINT', heard);
  let runtime;
  try {
    runtime = await createRuntime(settings);
  } catch (error) {
    if (!(error instanceof AhmaError)) throw error;
    stderr(`ahma-shell: ${error.message}\n`);
    if (!signalled) {
      onSignal = () => process.exit(1);
      await answerWithRefusal(
        refusal('start', error.message, { code: error.code, rpcCode: RpcCode.Refused }),
      );
    }
    settings.logger.fatal({ err: error }, 'ahma-shell stopped');
    return 1;
  }
  // Before the client's first message: the page sees every command from the start.
  const besides = await beside?.(runtime);
  const connection = serveOnStdio(runtime);
  const shutDown = async () => {
    await besides?.close();
    await connection.close();
    await runtime.close();
  };
  onSignal = () => void shutDown().finally(() => process.exit(0));
  if (signalled) onSignal();
  await connection.gone;
  settings.logger.info('client disconnected; shutting down');
  await shutDown();
  return 0;
}
