// Library entry of @ahma/shell-server, for tests and embedding: a runtime, MCP connections over it,
// the HTTP server over it, and the pieces of the CLI.
export {
  createRuntime,
  catalogDirectory,
  type Runtime,
  type RuntimeSettings,
  type Environment,
} from './runtime.js';
export { createMcpServer, type McpConnection } from './mcp/server.js';
export {
  startHttpServer,
  type HttpServer,
  type HttpServerOptions,
} from './transports/http/server.js';
export { SERVER_NAME, SERVER_VERSION } from './version.js';
export {
  parseCommandLine,
  USAGE,
  DEFAULT_TIMEOUT_SECONDS,
  type ServerOptions,
  type ParsedCommandLine,
} from './options.js';
export {
  createLogger,
  logDirectory,
  logFileName,
  type Logger,
  type LoggingOptions,
} from './logging.js';
export { runOneShot } from './one-shot.js';
export { TTY_REFUSAL } from './transports/stdio.js';
