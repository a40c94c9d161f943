// Library entry of @ahma/shell-server, for tests and embedding.
export {
  createServer,
  catalogDirectory,
  SERVER_NAME,
  SERVER_VERSION,
  type AhmaServer,
} from './server.js';
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
