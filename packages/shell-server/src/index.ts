// Library entry of @ahma/shell-server, for tests and embedding: a runtime, MCP connections over it,
// the HTTP server over it, and the pieces of the CLI.
export {
  createRuntime,
  type Runtime,
  type RuntimeSettings,
  type Environment,
} from './runtime/runtime.js';
export { createMcpServer, type McpConnection } from './protocol/server.js';
export {
  startHttpServer,
  type HttpServer,
  type HttpServerOptions,
} from './transports/http/server.js';
export { SERVER_NAME, SERVER_VERSION, catalogDirectory } from './package.js';
export { parseCommandLine, USAGE, type ParsedCommandLine } from './cli/options.js';
export { DEFAULT_TIMEOUT_SECONDS, type ServerOptions } from './runtime/settings.js';
export {
  createLogger,
  logDirectory,
  logFileName,
  type Logger,
  type LoggingOptions,
} from './cli/logging.js';
export { runOneShot } from './cli/one-shot.js';
export { TTY_REFUSAL } from './transports/stdio/serve.js';
