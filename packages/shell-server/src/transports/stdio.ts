// `ahma-shell --mode stdio`: MCP over stdin/stdout, as MCP clients start it. Refused on an
// interactive terminal (R8.10), where it could only confuse a person.
import type { Logger } from 'pino';
import { serveOnStdio } from '../mcp/stdio.js';
import type { ServerOptions } from '../options.js';
import { createServer } from '../server.js';

export const TTY_REFUSAL = `ahma-shell --mode stdio speaks the Model Context Protocol on stdin/stdout: an MCP client
starts it, it is not meant to be typed into. Register it with your client instead, for example:

  Claude Code:  claude mcp add ahma -- ahma-shell --mode stdio --sandbox-scope "$PWD"
  VS Code:      .vscode/mcp.json → { "servers": { "ahma": { "type": "stdio", "command": "ahma-shell",
                  "args": ["--mode", "stdio", "--sandbox-scope", "\${workspaceFolder}"] } } }
  Cursor:       .cursor/mcp.json → { "mcpServers": { "ahma": { "command": "ahma-shell",
                  "args": ["--mode", "stdio", "--sandbox-scope", "\${workspaceFolder}"] } } }

To try a tool by hand: ahma-shell --tool_name sandboxed_shell -- echo hello
`;

export async function serveStdio(options: ServerOptions, logger: Logger): Promise<void> {
  const ahma = await createServer(options, logger);
  const stop = () => void ahma.close().finally(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await serveOnStdio(ahma.server, logger);
  logger.info('client disconnected; shutting down');
  await ahma.close();
}
